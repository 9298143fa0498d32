"""The effect a reconciliation proves from counters against the sealed rows (pure)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpone.contracts import DponeError
from dpone.contracts.documents import OperatorEvidence
from dpone.executor.reconcile import attested_effect, polled_effect

OUTCOMES = ("running", "succeeded", "failed", "cancelled", "receipt_expired", "protocol_unknown")
counts = st.integers(min_value=0, max_value=50)


def _evidence(effect: str, accepted: int, rejected: int) -> OperatorEvidence:
    return OperatorEvidence.model_validate({
        "schema": "dpone.operator_evidence.v1", "effect": effect, "accepted_rows": accepted,
        "rejected_rows": rejected, "receiver_reference": "job-1", "attested_by": "ops"})


@given(sealed=counts, accepted=counts | st.none(), rejected=counts | st.none(),
       outcome=st.sampled_from(OUTCOMES), declared=st.booleans())
def test_a_poll_proves_applied_only_when_every_sealed_row_was_accepted(
        sealed: int, accepted: int | None, rejected: int | None, outcome: Any,
        declared: bool) -> None:
    try:
        effect = polled_effect(outcome, sealed, accepted, rejected, rejected_declared=declared)
    except DponeError as refusal:
        assert refusal.code == "reconcile.counts_contradict"
        counted = (accepted or 0) + ((rejected or 0) if declared else 0)
        assert counted > sealed
        return
    if effect == "applied":
        assert accepted == sealed and (rejected == 0 or not declared)
    if effect == "not_applied":
        assert accepted == 0 and declared and outcome in ("failed", "cancelled")
    if outcome == "running":
        assert effect == "running"


@given(sealed=counts, accepted=counts, rejected=counts,
       effect=st.sampled_from(["applied", "not_applied", "partially_applied"]))
def test_attested_evidence_never_contradicts_the_sealed_rows(
        sealed: int, accepted: int, rejected: int, effect: str) -> None:
    try:
        proven = attested_effect(_evidence(effect, accepted, rejected), sealed)
    except DponeError as refusal:
        assert refusal.code == "reconcile.counts_contradict"
        return
    assert proven == effect and accepted + rejected <= sealed
    if proven == "applied":
        assert (accepted, rejected) == (sealed, 0)
    if proven == "partially_applied":
        assert 0 < accepted < sealed


@pytest.mark.parametrize(("outcome", "accepted", "rejected", "effect"), [
    ("succeeded", 10, 0, "applied"),
    ("failed", 0, 10, "not_applied"),
    ("succeeded", 0, 10, "partially_applied"),  # per-record rejection of every row
    ("succeeded", 4, 6, "partially_applied"),
    ("succeeded", 4, 0, "unknown"),
    ("succeeded", None, None, "unknown"),
    ("receipt_expired", None, None, "unknown"),
    ("running", None, None, "running"),
])
def test_poll_examples(outcome: Any, accepted: int | None, rejected: int | None,
                       effect: str) -> None:
    assert polled_effect(outcome, 10, accepted, rejected, rejected_declared=True) == effect


def test_counts_above_the_sealed_rows_are_refused() -> None:
    with pytest.raises(DponeError) as refused:
        polled_effect("succeeded", 10, 11, 0, rejected_declared=True)
    assert refused.value.code == "reconcile.counts_contradict"
    assert refused.value.exit_code == 4


def test_evidence_is_closed() -> None:
    with pytest.raises(ValueError, match="extra"):
        OperatorEvidence.model_validate({
            "schema": "dpone.operator_evidence.v1", "effect": "applied", "accepted_rows": 1,
            "rejected_rows": 0, "receiver_reference": "x", "attested_by": "y", "extra": 1})
