"""The journal contract suite: every DeliveryJournalPort adapter behaves the same.

Written against the port only; ``journal`` is parametrized by adapter in conftest.py.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import DponeError, canonical_json
from dpone.contracts.journal import DeliveryJournalPort, TransitionRequest
from dpone.journal._ids import attempt_id
from dpone.journal._marker import marker_digest, marker_key
from support.journal import (
    ENVIRONMENT,
    OTHER_DOMAIN,
    admission,
    complete_failed,
    complete_full,
    generation,
    step,
    submit,
    sync_success,
)
from support.journal_reservations import Reservations


def _code(excinfo: pytest.ExceptionInfo[DponeError]) -> str:
    return excinfo.value.code


# -- admission -------------------------------------------------------------------------------


def test_admission_seals_the_whole_topology(journal: DeliveryJournalPort) -> None:
    request = admission([(0, 10), (10, 20), (20, 31)])
    result = journal.admit_parent(request)
    parent = result.parent
    assert not result.resumed
    assert parent.parent_id.startswith("op_v1_")
    assert [c.operation_id for c in parent.children] == [
        f"{parent.parent_id}_{n:04d}" for n in (1, 2, 3)]
    assert {c.state_name for c in parent.children} == {"sealed"}
    assert {c.revision for c in parent.children} == {1}
    assert parent.checkpoint_frontier == 0
    assert journal.find_parent(request.tenancy, request.parent_plan_digest) == parent
    assert journal.load_parent(parent.parent_id) == parent


def test_same_intent_resumes_without_new_rows(journal: DeliveryJournalPort) -> None:
    request = admission([(0, 10), (10, 20)])
    first = journal.admit_parent(request)
    again = journal.admit_parent(request)
    assert again.resumed
    assert again.parent == first.parent


def test_changed_intent_for_the_same_key_conflicts(journal: DeliveryJournalPort) -> None:
    journal.admit_parent(admission([(0, 10), (10, 20)]))
    corrected = admission([(0, 10), (10, 20)], salt="corrected-bytes")
    with pytest.raises(DponeError) as excinfo:
        journal.admit_parent(corrected)
    assert _code(excinfo) == "REST_DELIVERY_INTENT_CONFLICT"
    assert journal.find_parent(corrected.tenancy, corrected.parent_plan_digest) is None


def test_lower_generation_after_a_higher_overlap_is_stale(journal: DeliveryJournalPort) -> None:
    journal.admit_parent(admission([(0, 31)], gen=generation(31, 1)))
    with pytest.raises(DponeError) as excinfo:
        journal.admit_parent(admission([(10, 20)], gen=generation(31, 0), route="route-b"))
    assert _code(excinfo) == "REST_DELIVERY_STALE_GENERATION"


def test_a_refused_admission_leaves_nothing_behind(journal: DeliveryJournalPort) -> None:
    journal.admit_parent(admission([(20, 31)], gen=generation(40)))
    refused = admission([(0, 10), (10, 20), (20, 25)], gen=generation(31), route="route-b")
    with pytest.raises(DponeError):
        journal.admit_parent(refused)
    assert journal.find_parent(refused.tenancy, refused.parent_plan_digest) is None


def test_append_on_a_fully_applied_exact_scope_is_refused(journal: DeliveryJournalPort) -> None:
    first = journal.admit_parent(admission([(0, 10)], kind="incremental_append")).parent
    complete_full(journal, first.children[0].operation_id)
    with pytest.raises(DponeError) as excinfo:
        journal.admit_parent(admission([(0, 10)], kind="incremental_append", route="route-b"))
    assert _code(excinfo) == "REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED"


def test_append_with_a_correction_revision_is_refused(journal: DeliveryJournalPort) -> None:
    with pytest.raises(DponeError) as excinfo:
        journal.admit_parent(admission([(0, 10)], kind="incremental_append",
                                       gen=generation(10, 1)))
    assert _code(excinfo) == "REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED"


def test_non_overlapping_generations_never_block_each_other(journal: DeliveryJournalPort) -> None:
    february = journal.admit_parent(admission([(31, 59)], gen=generation(59))).parent
    complete_full(journal, february.children[0].operation_id)
    january = journal.admit_parent(admission([(0, 31)], gen=generation(31))).parent
    child, _lease = submit(journal, january.children[0].operation_id)
    assert child.state_name == "submitting"
    other_domain = journal.admit_parent(admission([(0, 59)], gen=generation(20),
                                                  domain=OTHER_DOMAIN, route="route-c")).parent
    assert other_domain.children[0].state_name == "sealed"


# -- CAS and the guard -----------------------------------------------------------------------


def test_stale_revision_is_a_revision_conflict(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    child, lease = submit(journal, parent.children[0].operation_id)
    sync_success(journal, child, lease)
    with pytest.raises(DponeError) as excinfo:
        sync_success(journal, child, lease)  # the same expected revision again
    assert _code(excinfo) == "journal.revision_conflict"
    assert journal.get_child(child.operation_id).state_name == "verifying_succeeded"


def test_illegal_transition_is_refused_and_state_unchanged(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    child = parent.children[0]
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
    with pytest.raises(DponeError) as excinfo:
        sync_success(journal, child, lease)  # sealed has no submit response
    assert _code(excinfo) == "journal.illegal_transition"
    with pytest.raises(DponeError) as missing_facts:
        step(journal, child, "sealed_pre_submit_fence_refused", "admission",
             "PRE_SUBMIT_FENCE_REFUSED", [], lease)
    assert _code(missing_facts) == "journal.illegal_transition"
    assert journal.get_child(child.operation_id) == child


def test_a_transition_under_the_wrong_lease_kind_is_refused(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    child, _mutation = submit(journal, parent.children[0].operation_id)
    observer = journal.acquire_lease(child.operation_id, "observation", "observer", 60)
    with pytest.raises(DponeError) as excinfo:
        sync_success(journal, child, observer)
    assert _code(excinfo) == "journal.illegal_transition"


def test_monotonic_fields_advance_by_one(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    sealed = parent.children[0]
    child, lease = submit(journal, sealed.operation_id)
    assert (child.revision, child.attempt_ordinal) == (sealed.revision + 1, 1)
    child = step(journal, child, "submitting_async_receipt_accepted", "submit_response",
                 "ASYNC_RECEIPT_PERSISTED", ["receipt_persisted"], lease,
                 receipt={"job_id": "job-1"})
    observer = journal.acquire_lease(child.operation_id, "observation", "trigger", 60)
    polled = step(journal, child, "accepted_poll_running", "observation", "JOB_RUNNING_OBSERVED",
                  ["observation_recorded"], observer, observation={"status": "running"})
    assert (polled.revision, polled.observation_ordinal) == (child.revision + 1, 1)
    assert polled.receipt == {"job_id": "job-1"}
    assert polled.journal_epoch >= child.journal_epoch
    observations = journal.list_observations(child.operation_id)
    assert [o["observation_ordinal"] for o in observations] == [1]
    assert observations[0]["document"] == {"status": "running"}


# -- leases (database clock) -----------------------------------------------------------------


def test_a_held_lease_is_refused_until_it_expires(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    first = journal.acquire_lease(operation_id, "mutation", "worker-1", 2)
    with pytest.raises(DponeError) as excinfo:
        journal.acquire_lease(operation_id, "mutation", "worker-2", 60)
    assert _code(excinfo) == "journal.lease_held"
    time.sleep(2.2)
    second = journal.acquire_lease(operation_id, "mutation", "worker-2", 60)
    assert second.token == first.token + 1
    with pytest.raises(DponeError) as stale:
        journal.plan_attempt(operation_id, first)
    assert _code(stale) == "journal.lease_lost"
    journal.plan_attempt(operation_id, second)


def test_a_lease_refusal_names_the_holder_and_the_expiry(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    held = journal.acquire_lease(operation_id, "mutation", "worker-1", 900)
    with pytest.raises(DponeError) as excinfo:
        journal.acquire_lease(operation_id, "mutation", "worker-2", 60)
    error = excinfo.value
    expires = held.expires_at.astimezone(dt.UTC).isoformat(timespec="seconds")
    expires = expires.replace("+00:00", "Z")
    assert error.code == "journal.lease_held"
    assert error.details["holder"] == "worker-1"
    assert error.details["lease_kind"] == "mutation"
    assert error.details["expires_at"] == expires
    assert 0 < error.details["expires_in_s"] <= 900
    assert "'worker-1'" in error.message and expires in error.message
    assert f"{error.details['expires_in_s']} s from now" in error.message
    assert error.document().details["holder"] == "worker-1"


def test_a_live_mutation_lease_of_an_admitted_delivery_is_found_by_plan_and_boundary(
        journal: DeliveryJournalPort) -> None:
    request = admission([(0, 10), (10, 20)])
    children = journal.admit_parent(request).parent.children
    where = (request.tenancy, request.plan_digest, request.boundary_from, request.boundary_to)
    journal.check_admitted_leases(*where)  # no lease: nothing refuses
    journal.acquire_lease(children[0].operation_id, "observation", "worker-1", 900)
    journal.check_admitted_leases(*where)  # only a mutation lease stops a rerun
    held = journal.acquire_lease(children[1].operation_id, "mutation", "worker-1", 900)
    journal.check_admitted_leases(request.tenancy, request.plan_digest, request.boundary_from,
                                  request.boundary_to - dt.timedelta(days=1))
    journal.check_admitted_leases(request.tenancy, "sha256:" + "0" * 64,
                                  request.boundary_from, request.boundary_to)
    with pytest.raises(DponeError) as excinfo:
        journal.check_admitted_leases(*where)
    error = excinfo.value
    assert (error.code, error.operation_id) == ("journal.lease_held", children[1].operation_id)
    assert error.details["holder"] == "worker-1"
    assert error.details["expires_at"] == held.expires_at.astimezone(dt.UTC).isoformat(
        timespec="seconds").replace("+00:00", "Z")
    journal.release_lease(held)
    journal.check_admitted_leases(*where)  # released: a rerun may go on


def test_released_lease_can_be_taken_with_a_new_token(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    first = journal.acquire_lease(operation_id, "mutation", "worker-1", 60)
    other_kind = journal.acquire_lease(operation_id, "observation", "worker-2", 60)
    assert other_kind.token == 1
    journal.release_lease(first)
    second = journal.acquire_lease(operation_id, "mutation", "worker-2", 60)
    assert second.token == first.token + 1


def test_expired_mutation_lease_after_submit_allows_observation_only(
        journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    lease = journal.acquire_lease(operation_id, "mutation", "worker-1", 2)
    child, lease = submit(journal, operation_id, lease=lease)
    time.sleep(2.2)
    takeover = journal.acquire_lease(operation_id, "mutation", "worker-2", 60)
    with pytest.raises(DponeError) as replan:
        journal.plan_attempt(operation_id, takeover)  # not even a fenced replay
    assert _code(replan) == "journal.lease_lost"
    with pytest.raises(DponeError) as outcome:
        sync_success(journal, child, takeover)
    assert _code(outcome) == "journal.lease_lost"
    observer = journal.acquire_lease(operation_id, "observation", "worker-2", 60)
    lost = step(journal, child, "submitting_mutation_lease_lost", "lease_expiry",
                "MUTATION_LEASE_EXPIRED_AFTER_SUBMIT", ["submit_outcome_absent"], observer)
    assert lost.axes.remote_effect == "UNKNOWN"


# -- the pre-submit sequence ------------------------------------------------------------------


def test_attempt_plan_and_marker_binding(journal: DeliveryJournalPort) -> None:
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
    plan = journal.plan_attempt(child.operation_id, lease)
    namespace = child.tenancy.operation_namespace
    assert plan.attempt_ordinal == 1
    assert plan.attempt_id == attempt_id(namespace, child.operation_id, 1)
    assert plan.marker_key == marker_key(namespace, child.operation_id, 1)
    assert plan.marker_key == f"markers/{namespace[7:]}/{child.operation_id}/1.json"
    marker = plan.marker
    assert (marker["operation_id"], marker["parent_id"], marker["attempt_ordinal"]) == (
        child.operation_id, child.parent_id, 1)
    assert marker["expected_journal_revision"] == child.revision
    assert marker["journal_epoch"] == journal.journal_epoch(ENVIRONMENT)
    assert marker["mutation_intent_digest"] == child.mutation_intent_digest
    with pytest.raises(DponeError) as wrong_digest:
        journal.enter_submitting(plan, marker_digest({**plan.marker, "x": 1}), lease,
                                 child.revision)
    assert _code(wrong_digest) == "journal.illegal_transition"
    assert journal.list_attempts(child.operation_id) == []
    submitted = journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision)
    assert (submitted.state_name, submitted.attempt_ordinal) == ("submitting", 1)
    [attempt] = journal.list_attempts(child.operation_id)
    assert (attempt["attempt_id"], attempt["marker_digest"]) == (
        plan.attempt_id, marker_digest(plan.marker))
    assert attempt["expected_revision"] == child.revision


def test_retry_wait_releases_capacity_and_retries_with_a_new_attempt(
        journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10), (10, 20), (20, 31)],
                                            max_remote_jobs=2)).parent
    first, second, third = (c.operation_id for c in parent.children)
    child_1, lease_1 = submit(journal, first)
    submit(journal, second)
    lease_3 = journal.acquire_lease(third, "mutation", "worker-3", 60)
    with pytest.raises(DponeError) as exhausted:
        submit(journal, third, lease=lease_3)
    assert _code(exhausted) == "journal.capacity_exhausted"
    assert journal.get_child(third).state_name == "sealed"
    waiting = step(journal, child_1, "submitting_not_started_retry", "transport",
                   "REQUEST_NOT_STARTED", ["request_not_started_proof", "retry_budget_remaining"],
                   lease_1)
    assert waiting.state_name == "retry_wait"
    third_child, _ = submit(journal, third, lease=lease_3)
    assert third_child.state_name == "submitting"
    with pytest.raises(DponeError) as still_full:
        submit(journal, first, lease=lease_1)
    assert _code(still_full) == "journal.capacity_exhausted"
    done = sync_success(journal, third_child, _)
    observer = journal.acquire_lease(third, "observation", "verifier", 60)
    step(journal, done, "verifying_succeeded_verified_full", "verification",
         "FULL_EFFECT_VERIFIED", ["verification_recorded", "all_rows_accounted"], observer)
    retried, _lease = submit(journal, first, lease=lease_1)
    assert (retried.state_name, retried.attempt_ordinal) == ("submitting", 2)
    attempts = journal.list_attempts(first)
    assert [a["attempt_ordinal"] for a in attempts] == [1, 2]
    assert attempts[0]["outcome"] == "submitting_not_started_retry"
    assert attempts[0]["attempt_id"] != attempts[1]["attempt_id"]


def test_a_certified_refusal_before_effect_waits_and_releases_capacity(
        journal: DeliveryJournalPort, reservations: Reservations) -> None:
    parent = journal.admit_parent(admission([(0, 10), (10, 20)], max_remote_jobs=1)).parent
    first, second = (c.operation_id for c in parent.children)
    child_1, lease_1 = submit(journal, first)
    lease_2 = journal.acquire_lease(second, "mutation", "worker-2", 60)
    with pytest.raises(DponeError) as exhausted:
        submit(journal, second, lease=lease_2)
    assert _code(exhausted) == "journal.capacity_exhausted"
    refused = ("submitting_rejected_before_effect", "submit_response", "REJECTED_BEFORE_EFFECT")
    with pytest.raises(DponeError) as uncertified:
        step(journal, child_1, *refused, ["response_recorded"], lease_1)
    assert _code(uncertified) == "journal.illegal_transition"
    waiting = step(journal, child_1, *refused,
                   ["response_recorded", "rejection_certified_before_effect"], lease_1,
                   receipt={"http_status": 401}, error_code="credential.rejected")
    assert (waiting.state_name, waiting.axes.remote_effect) == ("retry_wait", "NONE_PROVEN")
    assert (waiting.last_error_code, waiting.receipt) == ("credential.rejected",
                                                          {"http_status": 401})
    [refused_attempt] = journal.list_attempts(first)
    assert reservations(first) == {refused_attempt["attempt_id"]:
                                   "submitting_rejected_before_effect"}
    second_child, second_lease = submit(journal, second, lease=lease_2)
    assert second_child.state_name == "submitting"  # the refused attempt's slot was released
    done = sync_success(journal, second_child, second_lease)
    observer = journal.acquire_lease(second, "observation", "verifier", 60)
    step(journal, done, "verifying_succeeded_verified_full", "verification",
         "FULL_EFFECT_VERIFIED", ["verification_recorded", "all_rows_accounted"], observer)
    retried, _lease = submit(journal, first, lease=lease_1)
    assert (retried.state_name, retried.attempt_ordinal) == ("submitting", 2)
    assert retried.delivery_key == child_1.delivery_key
    assert [(a["attempt_ordinal"], a["outcome"]) for a in journal.list_attempts(first)] == [
        (1, "submitting_rejected_before_effect"), (2, None)]


def test_lower_overlapping_generation_in_flight_blocks_submit(
        journal: DeliveryJournalPort) -> None:
    old = journal.admit_parent(admission([(0, 31)], gen=generation(31, 0))).parent
    old_child, old_lease = submit(journal, old.children[0].operation_id)
    new = journal.admit_parent(admission([(0, 31)], gen=generation(31, 1))).parent
    new_lease = journal.acquire_lease(new.children[0].operation_id, "mutation", "worker-2", 60)
    with pytest.raises(DponeError) as in_flight:
        submit(journal, new.children[0].operation_id, lease=new_lease)
    assert _code(in_flight) == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT"
    waiting = step(journal, old_child, "submitting_not_started_retry", "transport",
                   "REQUEST_NOT_STARTED", ["request_not_started_proof", "retry_budget_remaining"],
                   old_lease)
    with pytest.raises(DponeError) as stale:
        submit(journal, waiting.operation_id, lease=old_lease)
    assert _code(stale) == "REST_DELIVERY_STALE_GENERATION"
    assert submit(journal, new.children[0].operation_id,
                  lease=new_lease)[0].state_name == "submitting"


# -- checkpoint frontier ---------------------------------------------------------------------


def test_frontier_stops_at_the_first_gap(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10), (10, 20), (20, 31)])).parent
    first, second, third = (c.operation_id for c in parent.children)
    complete_full(journal, first)
    complete_failed(journal, second)
    complete_full(journal, third)
    lease = journal.acquire_lease(parent.parent_id, "checkpoint", "checkpointer", 60)
    assert journal.promote_frontier(parent.parent_id, lease) == 1
    assert journal.promote_frontier(parent.parent_id, lease) == 1
    reloaded = journal.load_parent(parent.parent_id)
    assert reloaded.checkpoint_frontier == 1
    assert [c.axes.checkpoint_state for c in reloaded.children] == [
        "PROMOTED", "BLOCKED", "ELIGIBLE"]


def test_frontier_advances_over_more_children_than_one_promotion_batch(
        journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(day, day + 1) for day in range(150)])).parent
    for child in parent.children[:140]:
        complete_full(journal, child.operation_id)
    complete_full(journal, parent.children[141].operation_id)
    lease = journal.acquire_lease(parent.parent_id, "checkpoint", "checkpointer", 60)
    assert journal.promote_frontier(parent.parent_id, lease) == 140
    states = [c.axes.checkpoint_state for c in journal.load_parent(parent.parent_id).children]
    assert states[:140] == ["PROMOTED"] * 140
    assert states[140:142] == ["BLOCKED", "ELIGIBLE"]


def test_frontier_advances_over_a_contiguous_run(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10), (10, 20), (20, 31)])).parent
    for child in parent.children[:2]:
        complete_full(journal, child.operation_id)
    lease = journal.acquire_lease(parent.parent_id, "checkpoint", "checkpointer", 60)
    assert journal.promote_frontier(parent.parent_id, lease) == 2
    complete_full(journal, parent.children[2].operation_id)
    assert journal.promote_frontier(parent.parent_id, lease) == 3
    operator = journal.acquire_lease(parent.children[0].operation_id, "operator", "sre", 60)
    with pytest.raises(DponeError) as wrong:
        journal.promote_frontier(parent.parent_id, operator)
    assert _code(wrong) == "journal.lease_lost"


# -- mutation gate and journal epoch ---------------------------------------------------------


def test_blocked_gate_refuses_to_plan_an_attempt(journal: DeliveryJournalPort) -> None:
    """No MAY_ATTEMPT marker is planned under a BLOCKED gate: one planned now would bind an
    epoch that the reopening replaces, leaving an orphan for reconciliation."""
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    journal.set_mutation_gate(ENVIRONMENT, "BLOCKED", epoch=0, actor="sre", reason="restore")
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
    with pytest.raises(DponeError) as blocked:
        journal.plan_attempt(child.operation_id, lease)
    assert _code(blocked) == "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED"
    assert "dpone admin gate" in (blocked.value.hint or "")
    status = journal.gate_status(ENVIRONMENT)
    assert (status.mutation_gate, status.journal_epoch, status.reason, status.updated_by) == (
        "BLOCKED", 0, "restore", "sre")
    journal.set_mutation_gate(ENVIRONMENT, "OPEN", epoch=1, actor="sre", reason="approved")
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-2", 60)
    assert journal.plan_attempt(child.operation_id, lease).marker["journal_epoch"] == 1


def test_a_journal_never_gated_stands_open_at_epoch_zero(journal: DeliveryJournalPort) -> None:
    status = journal.gate_status(ENVIRONMENT)
    assert (status.mutation_gate, status.journal_epoch) == ("OPEN", 0)


def test_blocked_gate_refuses_submit_but_reads_keep_working(journal: DeliveryJournalPort) -> None:
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
    plan = journal.plan_attempt(child.operation_id, lease)
    journal.set_mutation_gate(ENVIRONMENT, "BLOCKED", epoch=0, actor="sre", reason="restore")
    assert journal.mutation_gate(ENVIRONMENT) == "BLOCKED"
    with pytest.raises(DponeError) as blocked:
        journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision)
    assert _code(blocked) == "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED"
    assert journal.get_child(child.operation_id) == child
    assert journal.list_attempts(child.operation_id) == []
    with pytest.raises(DponeError) as same_epoch:
        journal.set_mutation_gate(ENVIRONMENT, "OPEN", epoch=0, actor="sre", reason="approved")
    assert _code(same_epoch) == "journal.revision_conflict"
    journal.set_mutation_gate(ENVIRONMENT, "OPEN", epoch=1, actor="sre", reason="approved")
    assert (journal.mutation_gate(ENVIRONMENT), journal.journal_epoch(ENVIRONMENT)) == ("OPEN", 1)
    with pytest.raises(DponeError) as old_marker:
        journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision)
    assert _code(old_marker) == "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED"
    with pytest.raises(DponeError) as old_lease:
        stale_plan = journal.plan_attempt(child.operation_id, lease)
        journal.enter_submitting(stale_plan, marker_digest(stale_plan.marker), lease,
                                 child.revision)
    assert _code(old_lease) == "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED"
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-2", 60)
    fresh = journal.plan_attempt(child.operation_id, lease)
    submitted = journal.enter_submitting(fresh, marker_digest(fresh.marker), lease,
                                         child.revision)
    assert (submitted.state_name, submitted.journal_epoch) == ("submitting", 1)


# -- more of the port's edges ----------------------------------------------------------------


def test_async_delivery_end_to_end(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    child, lease = submit(journal, parent.children[0].operation_id)
    child = step(journal, child, "submitting_async_receipt_accepted", "submit_response",
                 "ASYNC_RECEIPT_PERSISTED", ["receipt_persisted"], lease,
                 receipt={"job_id": "j-1"})
    observer = journal.acquire_lease(child.operation_id, "observation", "trigger", 60)
    for transition_id, name, state in (
            ("accepted_poll_running", "JOB_RUNNING_OBSERVED", "waiting"),
            ("waiting_poll_running", "JOB_RUNNING_OBSERVED", "waiting"),
            ("waiting_poll_succeeded", "JOB_SUCCEEDED_OBSERVED", "verifying_succeeded")):
        child = step(journal, child, transition_id, "observation", name,
                     ["observation_recorded"], observer, observation={"status": name})
        assert child.state_name == state
    child = step(journal, child, "verifying_succeeded_verified_full", "verification",
                 "FULL_EFFECT_VERIFIED", ["verification_recorded", "all_rows_accounted"],
                 observer)
    assert (child.state_name, child.observation_ordinal) == ("final_succeeded_full_eligible", 3)
    checkpoint = journal.acquire_lease(parent.parent_id, "checkpoint", "checkpointer", 60)
    assert journal.promote_frontier(parent.parent_id, checkpoint) == 1
    assert journal.get_child(child.operation_id).state_name == "final_succeeded_full_promoted"


def test_operator_reconciliation_needs_new_ids_and_digests(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    child = step(journal, child, "submitting_may_have_reached_unfenced", "transport",
                 "REQUEST_MAY_HAVE_REACHED_RECEIVER", ["no_certified_fence"], lease)
    operator = journal.acquire_lease(operation_id, "operator", "sre", 60)
    opened = step(journal, child, "reconcile_open_not_accepted_unknown_unverified",
                  "operator_reconciliation", "RECONCILIATION_OPENED",
                  ["operator_authority_audited"], operator, reconciliation_id="rec-1")
    facts = ["operator_authority_audited", "read_only_receiver_evidence"]
    with pytest.raises(DponeError) as no_digest:
        step(journal, opened, "reconcile_not_accepted_unknown_to_unknown",
             "operator_reconciliation", "EFFECT_REMAINS_UNKNOWN", facts, operator,
             reconciliation_id="rec-1")
    assert _code(no_digest) == "journal.illegal_transition"
    evidence = "sha256:" + "1" * 64
    still_unknown = step(journal, opened, "reconcile_not_accepted_unknown_to_unknown",
                         "operator_reconciliation", "EFFECT_REMAINS_UNKNOWN", facts, operator,
                         reconciliation_id="rec-1", evidence_digest=evidence)
    with pytest.raises(DponeError) as reused_id:
        step(journal, still_unknown, "reconcile_open_not_accepted_unknown",
             "operator_reconciliation", "RECONCILIATION_OPENED", ["operator_authority_audited"],
             operator, reconciliation_id="rec-1")
    assert _code(reused_id) == "journal.illegal_transition"
    reopened = step(journal, still_unknown, "reconcile_open_not_accepted_unknown",
                    "operator_reconciliation", "RECONCILIATION_OPENED",
                    ["operator_authority_audited"], operator, reconciliation_id="rec-2")
    with pytest.raises(DponeError) as reused_digest:
        step(journal, reopened, "reconcile_not_accepted_unknown_to_full",
             "operator_reconciliation", "FULL_EFFECT_PROVEN", facts, operator,
             reconciliation_id="rec-2", evidence_digest=evidence)
    assert _code(reused_digest) == "journal.illegal_transition"
    full = step(journal, reopened, "reconcile_not_accepted_unknown_to_full",
                "operator_reconciliation", "FULL_EFFECT_PROVEN", facts, operator,
                reconciliation_id="rec-2", evidence_digest="sha256:" + "2" * 64)
    assert full.state_name == "final_not_accepted_full_eligible"


def test_submit_transitions_only_go_through_enter_submitting(
        journal: DeliveryJournalPort) -> None:
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
    with pytest.raises(DponeError) as excinfo:
        step(journal, child, "sealed_submit", "internal", "MAY_ATTEMPT_MARKER_BOUND",
             ["may_attempt_marker_durable", "capacity_reserved", "mutation_gate_open"], lease)
    assert _code(excinfo) == "journal.illegal_transition"
    plan = journal.plan_attempt(child.operation_id, lease)
    with pytest.raises(DponeError) as stale:
        journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision + 1)
    assert _code(stale) == "journal.revision_conflict"
    submitted = journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision)
    with pytest.raises(DponeError) as again:
        journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision)
    assert _code(again) == "journal.revision_conflict"
    replay = journal.plan_attempt(child.operation_id, lease)  # only a fenced replay may use it
    with pytest.raises(DponeError) as unfenced:
        journal.enter_submitting(replay, marker_digest(replay.marker), lease, submitted.revision)
    assert _code(unfenced) == "journal.illegal_transition"
    assert "observation or reconciliation only" in unfenced.value.message
    assert journal.get_child(child.operation_id) == submitted


def test_retry_is_due_only_after_its_delay(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    step(journal, child, "submitting_not_started_retry", "transport", "REQUEST_NOT_STARTED",
         ["request_not_started_proof", "retry_budget_remaining"], lease, next_check_after=later)
    with pytest.raises(DponeError) as early:
        submit(journal, operation_id, lease=lease)
    assert _code(early) == "journal.illegal_transition"
    waiting = journal.get_child(operation_id)
    step(journal, waiting, "retry_wait_budget_exhausted", "budget", "RETRY_BUDGET_EXHAUSTED",
         ["retry_unavailable"], lease, error_code="REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET")
    final = journal.get_child(operation_id)
    assert (final.state_name, final.last_error_code) == (
        "final_not_started", "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET")


def test_sealed_lower_generation_is_fenced_at_submit(journal: DeliveryJournalPort) -> None:
    old = journal.admit_parent(admission([(0, 31)], gen=generation(31, 0))).parent.children[0]
    journal.admit_parent(admission([(15, 20)], gen=generation(31, 1), route="route-b"))
    lease = journal.acquire_lease(old.operation_id, "mutation", "worker-1", 60)
    with pytest.raises(DponeError) as stale:
        submit(journal, old.operation_id, lease=lease)
    assert _code(stale) == "REST_DELIVERY_STALE_GENERATION"
    refused = step(journal, old, "sealed_pre_submit_fence_refused", "admission",
                   "PRE_SUBMIT_FENCE_REFUSED", ["no_request_sent"], lease,
                   error_code="REST_DELIVERY_STALE_GENERATION")
    assert refused.state_name == "final_not_started"


def test_unknown_operations_and_bad_requests(journal: DeliveryJournalPort) -> None:
    missing = "op_v1_" + "0" * 64 + "_0001"
    for call in (lambda: journal.get_child(missing), lambda: journal.load_parent(missing[:-5]),
                 lambda: journal.acquire_lease(missing, "mutation", "w", 60)):
        with pytest.raises(DponeError) as excinfo:
            call()
        assert _code(excinfo) == "journal.not_found"
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    with pytest.raises(DponeError) as bad_ttl:
        journal.acquire_lease(child.operation_id, "mutation", "w", 0)
    assert _code(bad_ttl) == "journal.illegal_transition"
    with pytest.raises(DponeError) as lower_epoch:
        journal.set_mutation_gate(ENVIRONMENT, "OPEN", epoch=2, actor="sre", reason="attested")
        journal.set_mutation_gate(ENVIRONMENT, "OPEN", epoch=1, actor="sre", reason="rewind")
    assert _code(lower_epoch) == "journal.revision_conflict"
    assert journal.journal_epoch(ENVIRONMENT) == 2


def test_marker_published_through_the_artifact_port_binds(journal: DeliveryJournalPort,
                                                           tmp_path: Path) -> None:
    """The caller writes ``canonical_json(marker)`` create-if-absent and passes its digest."""
    store = LocalArtifactStore(tmp_path / "markers")
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
    plan = journal.plan_attempt(child.operation_id, lease)
    ref = store.put_bytes(plan.marker_key, canonical_json(plan.marker))
    submitted = journal.enter_submitting(plan, ref.digest, lease, child.revision)
    assert submitted.state_name == "submitting"
    assert journal.list_attempts(child.operation_id)[0]["marker_key"] == plan.marker_key


def test_the_journal_takes_the_trigger_from_the_contract(journal: DeliveryJournalPort) -> None:
    """The caller names the transition and its facts; the trigger is the contract's."""
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    with pytest.raises(ValidationError):
        TransitionRequest.model_validate({
            "operation_id": operation_id, "transition_id": "submitting_sync_success",
            "expected_revision": child.revision, "facts": ["response_recorded"],
            "evidence_kind": "submit_response", "evidence_name": "SYNC_SUCCESS_WITH_COUNTERS"})

    def request(transition_id: str, *facts: str) -> TransitionRequest:
        return TransitionRequest(operation_id=operation_id, transition_id=transition_id,
                                 expected_revision=child.revision, facts=facts)

    for transition_id, facts, reason in (("submitting_sync_succes", ("response_recorded",),
                                          "unknown_transition"),
                                         ("submitting_sync_success", (), "guard_not_satisfied")):
        with pytest.raises(DponeError) as refused:
            journal.transition(request(transition_id, *facts), lease)
        assert _code(refused) == "journal.illegal_transition"
        assert refused.value.details["reason"] == reason
    assert journal.get_child(operation_id) == child
    done = journal.transition(request("submitting_sync_success", "response_recorded"), lease)
    assert (done.state_name, done.revision) == ("verifying_succeeded", child.revision + 1)
