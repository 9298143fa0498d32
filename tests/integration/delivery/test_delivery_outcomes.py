"""What the receiver reports after accepting a child, on both journals: partial application,
an expired receipt and an external cancellation (observed, verified, never invoked)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from dpone.contracts import DponeError, RemoteEffect
from dpone.contracts.journal import ChildOperation
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted
from dpone.receiver import ReceiverThread
from support.delivery import FULL, Harness, HarnessFactory

ONE_JOB = (dt.date(2026, 8, 1), dt.date(2026, 8, 4))  # one 3-day window


def _result_evidence(h: Harness, ordinal: int) -> dict[str, object]:
    child = h.child(ordinal)
    key = f"evidence/{child.operation_id}/attempt-{child.attempt_ordinal}/result.json"
    document = json.loads(h.store.get_bytes(key))
    assert isinstance(document, dict)
    return document


def test_a_partially_applied_sync_batch_blocks_before_that_child(
        harness: HarnessFactory) -> None:
    h = harness("sync", FULL)
    second = h.topology.children[1].descriptor.row_count

    def on_step(operation: ChildOperation, transition_id: str) -> None:
        if operation.ordinal == 1 and transition_id == "verifying_succeeded_verified_full":
            h.fail_submit("partial", accepted_rows=100)  # the next POST is child 2's

    result = h.run(on_step=on_step)

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_PARTIALLY_APPLIED"
    assert result.remote_effect is RemoteEffect.PARTIALLY_APPLIED
    assert result.checkpoint_frontier == 1
    assert result.evidence["ordinal"] == 2
    assert result.evidence["accepted_rows"] == 100
    assert result.evidence["rejected_rows"] == second - 100
    assert "run_certified_compensation" in result.allowed_actions
    assert h.journal.load_parent(result.parent_id).checkpoint_frontier == 1
    assert h.child(1).state_name == "final_succeeded_full_promoted"
    assert h.child(2).state_name == "final_succeeded_partial"
    assert h.child(2).last_error_code == "REST_DELIVERY_PARTIALLY_APPLIED"
    assert h.child(3).state_name == "sealed"
    assert _result_evidence(h, 2) == {
        "operation_id": h.child(2).operation_id, "acknowledgement": "succeeded",
        "expected_rows": second, "accepted_rows": 100, "rejected_rows": second - 100}
    ledger = h.ledger()
    assert ledger["rows_by_key"] == {h.sealed.mutation_key(1): h.topology.children[0].descriptor.row_count,
                                     h.sealed.mutation_key(2): 100}
    assert h.count("POST") == 2
    before = h.requests()
    again = h.run()
    assert isinstance(again, DeliveryBlocked) and again.code == "REST_DELIVERY_PARTIALLY_APPLIED"
    assert h.requests() == before


def test_an_incomplete_job_is_partially_applied(harness: HarnessFactory) -> None:
    h = harness("async")
    expected = h.topology.children[0].descriptor.row_count
    h.fail_submit("partial", accepted_rows=120)

    result = h.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_PARTIALLY_APPLIED"
    assert result.remote_effect is RemoteEffect.PARTIALLY_APPLIED
    assert result.checkpoint_frontier == 0
    assert result.evidence["phase"] == "incomplete"
    child = h.child(1)
    assert child.state_name == "final_succeeded_partial"
    assert (child.receipt or {})["accepted_rows"] == 120
    assert (1, "accepted_poll_succeeded") in h.steps
    assert _result_evidence(h, 1)["rejected_rows"] == expected - 120
    assert h.child(2).state_name == "sealed"
    assert h.journal.load_parent(result.parent_id).checkpoint_frontier == 0
    ledger = h.ledger()
    assert ledger["rows_by_key"] == {h.sealed.mutation_key(1): 120}
    assert h.count("POST") == 1


@pytest.mark.parametrize("status", [410, 404])
def test_an_expired_receipt_is_unknown_and_never_resubmitted(harness: HarnessFactory,
                                                             status: int) -> None:
    h = harness("async")
    h.fail_poll("expire_receipt", status=status)

    result = h.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_RECEIPT_EXPIRED"
    assert result.remote_effect is RemoteEffect.UNKNOWN
    assert result.checkpoint_frontier == 0
    assert "query_by_delivery_key" in result.allowed_actions
    assert result.evidence["http_status"] == status
    child = h.child(1)
    assert child.state_name == "final_expired_unknown_unverified"
    assert child.last_error_code == "REST_DELIVERY_RECEIPT_EXPIRED"
    assert (1, "accepted_poll_receipt_expired") in h.steps
    assert h.outcomes(1) == [(1, "submitting_async_receipt_accepted")]
    assert h.count("POST") == 1
    assert h.ledger()["mutations_total"] == 1
    before = h.requests()
    again = h.run()
    assert isinstance(again, DeliveryBlocked) and again.code == "REST_DELIVERY_RECEIPT_EXPIRED"
    assert h.requests() == before


@pytest.mark.parametrize("applied", ["all", "none"])
@pytest.mark.parametrize("seen", ["accepted", "waiting"])
def test_an_external_cancel_is_observed_and_verified_never_invoked(
        harness: HarnessFactory, slow_receiver: ReceiverThread, seen: str, applied: str) -> None:
    h = harness("async", ONE_JOB, receiver=slow_receiver)  # jobs stay pending until cancelled
    rows = h.topology.children[0].descriptor.row_count
    apply_rows = rows if applied == "all" else 0

    def on_step(operation: ChildOperation, transition_id: str) -> None:
        if transition_id == "accepted_poll_running":  # the job is running: cancel it now
            h.fail_poll("cancel_job", apply_rows=apply_rows)

    if seen == "accepted":
        h.fail_poll("cancel_job", apply_rows=apply_rows)  # cancelled before the first poll

    result = h.run(on_step=on_step if seen == "waiting" else None)

    assert (1, f"{seen}_poll_cancelled") in h.steps
    assert ((1, "accepted_poll_running") in h.steps) is (seen == "waiting")
    child = h.child(1)
    assert (child.receipt or {})["phase"] == "cancelled"
    if applied == "all":
        assert isinstance(result, DeliveryCompleted), result
        assert result.checkpoint_frontier == 1
        assert child.state_name == "final_cancelled_full_promoted"
        assert child.axes.remote_effect == RemoteEffect.FULLY_APPLIED
        assert (1, "verifying_cancelled_verified_full") in h.steps
    else:
        assert isinstance(result, DeliveryBlocked), result
        assert result.code == "receiver.terminal_failure"
        assert result.remote_effect is RemoteEffect.NONE_PROVEN
        assert result.checkpoint_frontier == 0
        assert child.state_name == "final_cancelled_none"
        assert child.last_error_code == "receiver.terminal_failure"
    assert h.journal.load_parent(child.parent_id).checkpoint_frontier == (applied == "all")
    assert h.ledger()["rows_by_key"] == {h.sealed.mutation_key(1): apply_rows}
    requests = h.requests()
    assert {line.split(" ", 1)[0] for line in requests} == {"POST", "GET"}
    assert not any("cancel" in line.lower() for line in requests)
    assert requests["POST /mock/v1/dataset-jobs"] == 1


@pytest.mark.parametrize("status", [503, 401])
def test_a_poll_without_an_answer_about_the_job_is_repeated_and_records_nothing(
        harness: HarnessFactory, status: int) -> None:
    h = harness("async", ONE_JOB)
    h.fail_poll("status", status=status, times=2)
    pauses: list[float] = []

    result = h.run(sleep=pauses.append)

    assert isinstance(result, DeliveryCompleted), result
    assert len(pauses) == 2
    assert [step for ordinal, step in h.steps if "_poll_" in step] == ["accepted_poll_succeeded"]
    observations = h.journal.list_observations(h.child(1).operation_id)
    assert [o["document"]["phase"] for o in observations] == ["complete"]
    assert h.count("POST") == 1


def test_polls_that_never_answer_stop_as_unavailable_and_keep_the_receipt(
        harness: HarnessFactory) -> None:
    h = harness("async", ONE_JOB)
    budget = h.sealed.plan.profile.snapshot.retry.observation.max_attempts
    h.fail_poll("status", status=503, times=budget)

    with pytest.raises(DponeError) as stopped:
        h.run()

    assert stopped.value.code == "receiver.unavailable"
    assert h.child(1).state_name == "accepted"
    assert (h.child(1).receipt or {})["id"]
    again = h.run()
    assert isinstance(again, DeliveryCompleted), again
    assert h.count("POST") == 1
