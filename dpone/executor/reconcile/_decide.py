"""The effect a reconciliation proves, from counters against the sealed rows of the child.

Pure: no I/O. A proof that contradicts the durable facts (more rows than were sealed, an
applied effect that does not account for every row with none rejected, a partial effect that
is all or nothing) is refused with ``reconcile.counts_contradict`` and nothing is recorded.
Only ``accepted == sealed`` with ``rejected == 0`` is ever FULLY_APPLIED.
"""

from __future__ import annotations

from dpone.contracts import DponeError
from dpone.contracts.documents import OperatorEvidence, ProvenEffect
from dpone.executor.supervisor import counter_verdict
from dpone.executor.supervisor._transitions import PollOutcome


def _contradiction(message: str, sealed_rows: int, accepted: int | None,
                   rejected: int | None) -> DponeError:
    return DponeError(code="reconcile.counts_contradict", message=message,
                      details={"sealed_rows": sealed_rows, "accepted_rows": accepted,
                               "rejected_rows": rejected})


def check_bounds(sealed_rows: int, accepted: int | None, rejected: int | None) -> None:
    """Refuse counters above the sealed rows (together or alone) or below zero."""
    counted = [value for value in (accepted, rejected) if value is not None]
    if any(value < 0 for value in counted) or sum(counted) > sealed_rows:
        raise _contradiction(f"the counters ({accepted} accepted, {rejected} rejected) exceed "
                             f"the {sealed_rows} sealed row(s) of the child", sealed_rows,
                             accepted, rejected)


def attested_effect(evidence: OperatorEvidence, sealed_rows: int) -> ProvenEffect:
    """The effect an operator attests, checked against the sealed rows."""
    accepted, rejected = evidence.accepted_rows, evidence.rejected_rows
    check_bounds(sealed_rows, accepted, rejected)
    consistent = {
        "applied": accepted == sealed_rows and rejected == 0,
        "not_applied": accepted == 0,
        "partially_applied": 0 < accepted < sealed_rows,
    }[evidence.effect]
    if not consistent:
        raise _contradiction(f"an effect {evidence.effect} does not match {accepted} accepted and "
                             f"{rejected} rejected of {sealed_rows} sealed row(s)", sealed_rows,
                             accepted, rejected)
    return evidence.effect


def polled_effect(outcome: PollOutcome, sealed_rows: int, accepted: int | None,
                  rejected: int | None, *, rejected_declared: bool) -> ProvenEffect:
    """The effect a read-only poll of a receipt proves.

    A running job is ``running``; an expired receipt or an answer the profile does not
    recognize proves nothing (``unknown``). A finished job's counters are judged by
    :func:`~dpone.executor.supervisor.counter_verdict`, the verdict the supervisor's verification
    uses, after counters above the sealed rows are refused.
    """
    if outcome == "running":
        return "running"
    if outcome == "receipt_expired" or outcome == "protocol_unknown":  # noqa: PLR1714 - narrows
        return "unknown"
    check_bounds(sealed_rows, accepted, rejected if rejected_declared else 0)
    return counter_verdict(outcome, sealed_rows, accepted, rejected,
                           rejected_declared=rejected_declared)
