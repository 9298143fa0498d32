"""The counter verdict: what a receiver's counters prove about a child's remote effect.

One pure function (no ports, no I/O) that the supervisor's verification and reconciliation's
read-only poll both use, so the two can never disagree. It follows the spec's result table:

============================================  ===================================================
counters (against the child's sealed rows)    verdict
============================================  ===================================================
accepted or (declared) rejected missing        unknown: nothing is provable
accepted == sealed, rejected == 0              applied (FULLY_APPLIED), whatever the ack
ack failed/cancelled/expired, rejected         not_applied: the job did not succeed and counted no
counted, accepted == 0                         accepted row
accepted + rejected == sealed, accepted <      partially_applied: a per-record rejection, even of
sealed                                         every row after a success acknowledgement (a
                                               success never proves the absence of an effect, and
                                               no receiver proves an atomic rollback in V1)
anything else (unprocessed rows, counters      unknown: contradictory or incomplete counters
above the sealed rows)
============================================  ===================================================

A profile that declares no rejected counter counts every row it does not accept as unknown:
its rejected count is 0.
"""

from __future__ import annotations

from typing import Literal

Acknowledgement = Literal["succeeded", "failed", "cancelled", "expired"]
Verdict = Literal["applied", "not_applied", "partially_applied", "unknown"]


def counter_verdict(acknowledgement: Acknowledgement, sealed_rows: int, accepted: object,
                    rejected: object, *, rejected_declared: bool) -> Verdict:
    """The effect the counters ``accepted`` / ``rejected`` (as the receiver reported them:
    ints, or anything else when missing or mistyped) prove for a child of ``sealed_rows``."""
    rejected = rejected if rejected_declared else 0
    if not isinstance(accepted, int) or not isinstance(rejected, int):
        return "unknown"
    if accepted < 0 or rejected < 0 or accepted + rejected > sealed_rows:
        return "unknown"
    if accepted == sealed_rows and rejected == 0:
        return "applied"
    if (acknowledgement != "succeeded" and rejected_declared and accepted == 0
            and sealed_rows > 0):
        return "not_applied"
    if accepted + rejected == sealed_rows:
        return "partially_applied"
    return "unknown"
