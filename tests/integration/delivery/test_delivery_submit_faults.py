"""Submit faults on both journals: a commit followed by a dropped connection (unfenced and under
the certified fence), a bare duplicate, throttling within and beyond the submit budget."""

from __future__ import annotations

import time

import pytest

from dpone.contracts import DponeError, RemoteEffect, canonical_json
from dpone.contracts.journal import ChildOperation
from dpone.executor.supervisor import (
    DeliveryBlocked,
    DeliveryCompleted,
    DeliveryResult,
    parent_admission,
)
from support.delivery import Harness, HarnessFactory, uncertified

UNKNOWN_STATE = "final_not_accepted_unknown_unverified"


def _assert_blocked_first_child(h: Harness, result: DeliveryResult, code: str) -> DeliveryBlocked:
    """Blocked on child 1 with an UNKNOWN effect, the frontier at 0, child 2 never touched."""
    assert isinstance(result, DeliveryBlocked), result
    assert result.code == code
    assert result.remote_effect is RemoteEffect.UNKNOWN
    assert result.checkpoint_frontier == 0
    assert result.evidence["state_name"] == UNKNOWN_STATE
    assert "reconcile_delivery_key" in result.allowed_actions
    child = h.child(1)
    assert result.operation_id == child.operation_id
    assert child.state_name == UNKNOWN_STATE
    assert child.axes.remote_effect == RemoteEffect.UNKNOWN
    assert child.last_error_code == code
    assert h.journal.load_parent(result.parent_id).checkpoint_frontier == 0
    if len(h.topology.children) > 1:
        assert h.child(2).state_name == "sealed"
    return result


def _assert_rerun_sends_nothing(h: Harness, code: str) -> None:
    before = h.requests()
    again = h.run()
    assert isinstance(again, DeliveryBlocked), again
    assert again.code == code
    assert h.requests() == before


@pytest.mark.parametrize("family", ["sync", "async"])
def test_commit_then_drop_without_a_certified_fence_is_unknown_and_never_resent(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family)
    if family == "async":
        h.plan = uncertified(h.plan)
    h.fail_submit("commit_then_drop")

    result = h.run()

    blocked = _assert_blocked_first_child(h, result, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")
    assert blocked.evidence["transport_phase"] == "may_have_reached"
    assert blocked.evidence["attempt_ordinal"] == 1
    assert h.outcomes(1) == [(1, "submitting_may_have_reached_unfenced")]
    ledger = h.ledger()
    assert ledger["mutations_total"] == 1  # the receiver committed before dropping
    assert [m["key"] for m in ledger["mutations"]] == [h.sealed.mutation_key(1)]
    assert h.count("POST") == 1
    _assert_rerun_sends_nothing(h, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")
    assert h.ledger()["mutations_total"] == 1


@pytest.mark.parametrize(("fault", "params"), [
    ("commit_then_drop", {}),
    ("status", {"status": 503, "after_commit": True}),
], ids=["commit_then_drop", "503_after_commit"])
def test_a_committed_submit_under_the_certified_fence_replays_once_and_resumes_observation(
        harness: HarnessFactory, fault: str, params: dict[str, object]) -> None:
    h = harness("async")
    assert h.plan.fence.type == "receiver_duplicate_key" and h.plan.fence.certified_in_environment
    h.fail_submit(fault, **params)
    replayed: list[ChildOperation] = []

    def on_step(operation: ChildOperation, transition_id: str) -> None:
        if transition_id == "replay_duplicate_receipt_same_intent":
            replayed.append(operation)

    result = h.run(on_step=on_step)

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == 2
    assert result.children[0].attempt_ordinal == 2
    assert result.children[1].attempt_ordinal == 1
    assert h.outcomes(1) == [(1, "submitting_fenced_replay"),
                             (2, "replay_duplicate_receipt_same_intent")]
    job = h.receiver.state.jobs.by_filename(h.sealed.mutation_key(1))
    assert job is not None
    assert len(replayed) == 1
    assert replayed[0].receipt == {"http_status": 409, "id": job.job_id,
                                   "filename": h.sealed.mutation_key(1)}
    steps = [step for ordinal, step in h.steps if ordinal == 1]
    assert steps[steps.index("replay_duplicate_receipt_same_intent") + 1] == \
        "accepted_poll_succeeded"
    assert (h.child(1).receipt or {})["id"] == job.job_id
    ledger = h.ledger()
    assert ledger["duplicate_mutations"] == 0
    assert ledger["rows_by_key"][h.sealed.mutation_key(1)] == h.topology.children[0].descriptor.row_count
    assert ledger["mutations_total"] == 2
    assert h.requests()["POST /mock/v1/dataset-jobs"] == 3  # child 1 twice (same key), child 2


def test_replays_stop_as_unknown_once_the_certified_fence_budget_is_spent(
        harness: HarnessFactory) -> None:
    h = harness("async")
    attempts = h.plan.profile.snapshot.retry.submit.max_attempts
    assert attempts == 3
    h.fail_submit("commit_then_drop", times=attempts)
    waits: list[float] = []

    result = h.run(sleep=waits.append)

    blocked = _assert_blocked_first_child(h, result, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")
    assert blocked.evidence["attempt_ordinal"] == attempts
    assert h.outcomes(1) == [(1, "submitting_fenced_replay"), (2, "replay_again"),
                             (3, "replay_fence_budget_exhausted")]
    assert len(waits) == attempts - 1
    ledger = h.ledger()
    assert ledger["mutations_total"] == 1  # every replay carried the same key: one job
    assert ledger["duplicate_mutations"] == 0
    assert h.count("POST") == attempts
    _assert_rerun_sends_nothing(h, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")


@pytest.mark.parametrize("family", ["sync", "async"])
def test_a_bare_conflict_is_an_unsafe_retry_and_never_resent(harness: HarnessFactory,
                                                             family: str) -> None:
    h = harness(family)
    h.fail_submit("status", status=409)

    result = h.run()

    code = "REST_DELIVERY_UNSAFE_RETRY" if family == "async" else "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert isinstance(result, DeliveryBlocked), result
    if family == "sync":  # the sync profile declares no duplicate answer: 409 is unrecognized
        assert result.code == code
        assert h.child(1).state_name == "final_protocol_unknown_unknown_unverified"
    else:
        _assert_blocked_first_child(h, result, code)
        assert h.outcomes(1) == [(1, "submitting_bare_duplicate")]
    assert result.remote_effect is RemoteEffect.UNKNOWN
    assert result.evidence["http_status"] == 409
    assert h.count("POST") == 1
    assert h.ledger()["mutations_total"] == 0
    _assert_rerun_sends_nothing(h, code)


def test_a_retry_after_beyond_the_submit_budget_stops_without_an_early_retry(
        harness: HarnessFactory) -> None:
    h = harness("async")
    assert h.plan.profile.snapshot.retry.submit.budget_s == 300
    h.fail_submit("status", status=429, retry_after=9999)
    waits: list[float] = []

    result = h.run(sleep=waits.append)

    blocked = _assert_blocked_first_child(h, result, "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET")
    assert blocked.evidence["http_status"] == 429
    assert blocked.evidence["retry_after_s"] == 9999
    assert 0 < int(blocked.evidence["remaining_budget_s"]) <= 300
    assert "reconcile_delivery_key" in blocked.allowed_actions
    assert h.outcomes(1) == [(1, "submitting_throttled_beyond_budget")]
    assert waits == []
    assert h.count("POST") == 1
    assert h.ledger()["mutations_total"] == 0
    _assert_rerun_sends_nothing(h, "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET")


def test_a_small_retry_after_under_the_certified_fence_is_honoured_then_replayed(
        harness: HarnessFactory) -> None:
    h = harness("async")
    h.fail_submit("status", status=429, retry_after=1)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(0)

    result = h.run(sleep=sleep)

    assert isinstance(result, DeliveryCompleted), result
    assert len(waits) == 1 and waits[0] >= 1.0
    assert result.children[0].attempt_ordinal == 2
    assert h.outcomes(1) == [(1, "submitting_fenced_replay"),
                             (2, "replay_async_receipt_accepted")]
    ledger = h.ledger()
    assert ledger["mutations_total"] == 2
    assert ledger["duplicate_mutations"] == 0
    assert h.requests()["POST /mock/v1/dataset-jobs"] == 3
    assert h.child(1).state_name == "final_succeeded_full_promoted"


@pytest.mark.parametrize("family", ["sync", "async"])
def test_a_child_left_submitting_by_a_lost_worker_is_taken_over_as_unknown(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family)
    parent = h.journal.admit_parent(parent_admission(h.plan, h.topology)).parent
    child = parent.children[0]
    lease = h.journal.acquire_lease(child.operation_id, "mutation", "lost-worker", 2)
    attempt = h.journal.plan_attempt(child.operation_id, lease)
    marker = h.store.put_bytes(attempt.marker_key, canonical_json(attempt.marker))
    submitting = h.journal.enter_submitting(attempt, marker.digest, lease, child.revision)
    assert submitting.state_name == "submitting"

    with pytest.raises(DponeError) as held:
        h.run()  # the lost worker's lease is still live: nothing to take over yet
    assert held.value.code == "journal.lease_held"
    while h.journal.now() <= lease.expires_at:
        time.sleep(0.1)

    result = h.run()

    blocked = _assert_blocked_first_child(h, result, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")
    assert blocked.evidence["attempt_ordinal"] == 1
    assert h.outcomes(1) == [(1, "submitting_mutation_lease_lost")]
    assert (1, "submitting_mutation_lease_lost") in h.steps
    assert h.requests() == {}  # no mutation, no poll: the takeover only records UNKNOWN
    _assert_rerun_sends_nothing(h, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")
    assert h.ledger()["mutations_total"] == 0
