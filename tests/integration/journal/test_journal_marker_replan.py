"""Re-planning an attempt that never entered SUBMITTING publishes the same MAY_ATTEMPT marker.

A run that published an attempt's marker and was then refused entering SUBMITTING leaves the
child where it was; the next run plans that same attempt again and must offer the identical
bytes, or the immutable store refuses them and the delivery can never proceed. An attempt that
did enter SUBMITTING is never planned again: the next plan is the next ordinal.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import DponeError, canonical_json
from dpone.contracts.journal import AttemptPlan, DeliveryJournalPort, Lease
from dpone.journal._marker import marker_digest
from support.journal import admission, generation, step, submit


def _publish(store: LocalArtifactStore, plan: AttemptPlan) -> str:
    """What the supervisor does before entering SUBMITTING: the marker, create-if-absent."""
    return store.put_bytes(plan.marker_key, canonical_json(plan.marker)).digest


def _refused(journal: DeliveryJournalPort, plan: AttemptPlan, digest: str, lease: Lease,
             revision: int, *, fenced_replay: bool = False) -> str:
    with pytest.raises(DponeError) as refused:
        journal.enter_submitting(plan, digest, lease, revision, fenced_replay=fenced_replay)
    return refused.value.code


def test_an_attempt_refused_before_submitting_is_planned_again_with_the_same_marker(
        journal: DeliveryJournalPort, tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "markers")
    old = journal.admit_parent(admission([(0, 31)], gen=generation(31, 0))).parent
    in_flight = old.children[0].operation_id
    old_child, old_lease = submit(journal, in_flight)
    child = journal.admit_parent(admission([(0, 31)], gen=generation(31, 1))).parent.children[0]
    lease = journal.acquire_lease(child.operation_id, "mutation", "run-1", 60)
    plan = journal.plan_attempt(child.operation_id, lease)
    digest = _publish(store, plan)
    assert _refused(journal, plan, digest, lease, child.revision) == (
        "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT")
    journal.release_lease(lease)
    assert journal.get_child(child.operation_id) == child
    time.sleep(0.01)  # the database clock moves on between the two runs

    again_lease = journal.acquire_lease(child.operation_id, "mutation", "run-2", 60)
    again = journal.plan_attempt(child.operation_id, again_lease)
    assert again == plan
    assert _publish(store, again) == digest  # the same bytes: create-if-absent succeeds
    assert _refused(journal, again, digest, again_lease, child.revision) == (
        "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT")

    # The earlier generation's outcome is verified: the same attempt now enters SUBMITTING.
    done = step(journal, old_child, "submitting_sync_success", "submit_response",
                "SYNC_SUCCESS_WITH_COUNTERS", ["response_recorded"], old_lease)
    verifier = journal.acquire_lease(in_flight, "observation", "verifier", 60)
    step(journal, done, "verifying_succeeded_verified_full", "verification",
         "FULL_EFFECT_VERIFIED", ["verification_recorded", "all_rows_accounted"], verifier)
    third = journal.plan_attempt(child.operation_id, again_lease)
    assert third == plan and _publish(store, third) == digest
    entered = journal.enter_submitting(third, digest, again_lease, child.revision)
    assert (entered.state_name, entered.attempt_ordinal) == ("submitting", 1)
    [attempt] = journal.list_attempts(child.operation_id)
    assert (attempt["attempt_ordinal"], attempt["marker_key"], attempt["marker_digest"]) == (
        1, plan.marker_key, digest)


def test_an_attempt_that_entered_submitting_is_never_planned_again(
        journal: DeliveryJournalPort, tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "markers")
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    lease = journal.acquire_lease(child.operation_id, "mutation", "run-1", 60)
    plan = journal.plan_attempt(child.operation_id, lease)
    digest = _publish(store, plan)
    entered = journal.enter_submitting(plan, digest, lease, child.revision)
    # Bound to the attempt SUBMITTING holds, the plan is neither a new attempt nor a replay.
    assert _refused(journal, plan, digest, lease, entered.revision) == "journal.illegal_transition"
    assert _refused(journal, plan, digest, lease, entered.revision,
                    fenced_replay=True) == "journal.revision_conflict"
    waiting = step(journal, entered, "submitting_not_started_retry", "transport",
                   "REQUEST_NOT_STARTED", ["request_not_started_proof", "retry_budget_remaining"],
                   lease)

    retry = journal.plan_attempt(child.operation_id, lease)
    assert retry.attempt_ordinal == 2 and retry.marker_key != plan.marker_key
    assert retry.marker["expected_journal_revision"] == waiting.revision
    for stale in (plan, plan.model_copy(update={"marker": {
            **plan.marker, "expected_journal_revision": waiting.revision}})):
        # The entered attempt's ordinal, even re-bound to the current revision, is refused.
        code = _refused(journal, stale, marker_digest(stale.marker), lease, waiting.revision)
        assert code == "journal.revision_conflict"
    assert [a["attempt_ordinal"] for a in journal.list_attempts(child.operation_id)] == [1]
    retried = journal.enter_submitting(retry, _publish(store, retry), lease, waiting.revision)
    assert (retried.state_name, retried.attempt_ordinal) == ("submitting", 2)
