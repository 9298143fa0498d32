"""One counter verdict for the supervisor's verification and reconciliation's read-only poll.

A row per line of the verdict table (``dpone.executor.supervisor.counter_verdict``, from the spec's
result table:
partial or per-record rejection is PARTIALLY_APPLIED unless the receiver proves an atomic
rollback; a success acknowledgement never proves the absence of an effect; missing or
contradictory counters prove nothing), and the proof that reconciliation answers exactly as the
verdict does, including a job that succeeded with every row rejected (once ``unknown`` there and
PARTIALLY_APPLIED in the supervisor).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpone.contracts import DponeError, RemoteEffect
from dpone.executor.reconcile._decide import polled_effect
from dpone.executor.supervisor import DeliveryBlocked, counter_verdict
from support.supervisor import Supervised

SEALED = 10
ROWS: list[tuple[str, str, Any, Any, bool, str]] = [
    # (table row, acknowledgement, accepted, rejected, rejected declared, verdict)
    ("accepted missing", "succeeded", None, 0, True, "unknown"),
    ("accepted mistyped", "succeeded", "10", 0, True, "unknown"),
    ("declared rejected missing", "succeeded", 10, None, True, "unknown"),
    ("every row accepted after success", "succeeded", 10, 0, True, "applied"),
    ("every row accepted after failure", "failed", 10, 0, True, "applied"),
    ("every row accepted, no rejected counter", "succeeded", 10, None, False, "applied"),
    ("failed, nothing accepted", "failed", 0, 10, True, "not_applied"),
    ("cancelled, nothing accepted nor rejected", "cancelled", 0, 0, True, "not_applied"),
    ("expired, nothing accepted", "expired", 0, 3, True, "not_applied"),
    ("failed, nothing accepted, no rejected counter", "failed", 0, None, False, "unknown"),
    ("success with every row rejected", "succeeded", 0, 10, True, "partially_applied"),
    ("success with some rows rejected", "succeeded", 4, 6, True, "partially_applied"),
    ("failure with some rows applied", "failed", 4, 6, True, "partially_applied"),
    ("success with unprocessed rows", "succeeded", 4, 0, True, "unknown"),
    ("success accounting for no row", "succeeded", 0, 0, True, "unknown"),
    ("counters above the sealed rows", "succeeded", 8, 8, True, "unknown"),
    ("negative counter", "succeeded", -1, 11, True, "unknown"),
]


@pytest.mark.parametrize(("row", "ack", "accepted", "rejected", "declared", "verdict"), ROWS,
                         ids=[row[0] for row in ROWS])
def test_each_row_of_the_verdict_table(row: str, ack: Any, accepted: Any, rejected: Any,
                                       declared: bool, verdict: str) -> None:
    assert counter_verdict(ack, SEALED, accepted, rejected,
                           rejected_declared=declared) == verdict


@pytest.mark.parametrize(("row", "ack", "accepted", "rejected", "declared", "verdict"),
                         [row for row in ROWS if row[1] != "expired" and row[2] != "10"],
                         ids=[row[0] for row in ROWS if row[1] != "expired" and row[2] != "10"])
def test_reconciliation_answers_as_the_verdict(row: str, ack: Any, accepted: Any,
                                               rejected: Any, declared: bool,
                                               verdict: str) -> None:
    bounded = all(not isinstance(v, int) or v >= 0 for v in (accepted, rejected)) and sum(
        v for v in (accepted, rejected if declared else 0) if isinstance(v, int)) <= SEALED
    if not bounded:  # reconciliation refuses counters that contradict the sealed rows
        with pytest.raises(DponeError) as refused:
            polled_effect(ack, SEALED, accepted, rejected, rejected_declared=declared)
        assert refused.value.code == "reconcile.counts_contradict"
        return
    assert polled_effect(ack, SEALED, accepted, rejected, rejected_declared=declared) == verdict


def test_a_success_with_every_row_rejected_is_partially_applied_in_reconciliation() -> None:
    assert polled_effect("succeeded", SEALED, 0, SEALED, rejected_declared=True) == \
        "partially_applied"


@given(ack=st.sampled_from(["succeeded", "failed", "cancelled"]),
       sealed=st.integers(min_value=1, max_value=50),
       accepted=st.integers(min_value=0, max_value=50),
       rejected=st.one_of(st.none(), st.integers(min_value=0, max_value=50)),
       declared=st.booleans())
def test_reconciliation_never_disagrees_with_the_verdict(ack: Any, sealed: int, accepted: int,
                                                         rejected: int | None,
                                                         declared: bool) -> None:
    expected = counter_verdict(ack, sealed, accepted, rejected, rejected_declared=declared)
    try:
        answer = polled_effect(ack, sealed, accepted, rejected, rejected_declared=declared)
    except DponeError as refused:
        assert refused.code == "reconcile.counts_contradict"
        assert expected == "unknown"
        return
    assert answer == expected


def test_the_supervisor_records_a_job_that_rejected_every_row_as_partially_applied(
        supervised: Callable[..., Supervised]) -> None:
    s = supervised("async")
    rows = s.topology.children[0].descriptor.row_count
    s.receiver.polls = [s.receiver.job("complete", accepted=0, rejected=rows)]

    result = s.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_PARTIALLY_APPLIED"
    assert s.child(1).axes.remote_effect == RemoteEffect.PARTIALLY_APPLIED
    assert polled_effect("succeeded", rows, 0, rows, rejected_declared=True) == \
        "partially_applied"
