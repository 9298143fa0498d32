"""The journal contract suite, certified same-key fenced replay and the journal clock.

Written against the port (plus the ``reservations`` reader of the same store); ``journal`` is
parametrized over both adapters in conftest.py.
"""

from __future__ import annotations

import datetime as dt

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, Lease
from dpone.journal._marker import marker_digest
from support.journal import ENVIRONMENT, admission, step, submit, sync_success
from support.journal_reservations import Reservations

REPLAY_FACTS = ("certified_remote_fence", "retry_budget_remaining", "may_attempt_marker_durable",
                "capacity_reserved", "mutation_gate_open")
THROTTLED = ("submit_response", "RETRY_AFTER_EXCEEDS_BUDGET",
             ["response_recorded", "retry_unavailable"])
BUDGET_CODE = "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET"


def replay(journal: DeliveryJournalPort, child: ChildOperation, lease: Lease, *,
           fenced_replay: bool = True) -> ChildOperation:
    """Plan the next attempt and re-enter SUBMITTING through the pre-submit transaction."""
    plan = journal.plan_attempt(child.operation_id, lease)
    return journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision,
                                    fenced_replay=fenced_replay)


def _code(excinfo: pytest.ExceptionInfo[DponeError]) -> str:
    return excinfo.value.code


def test_fenced_replay_and_replay_again_under_one_slot(journal: DeliveryJournalPort,
                                                       reservations: Reservations) -> None:
    parent = journal.admit_parent(admission([(0, 10), (10, 20)], max_remote_jobs=1)).parent
    first, second = (c.operation_id for c in parent.children)
    child, lease = submit(journal, first)
    replayed = replay(journal, child, lease)
    assert (replayed.state_name, replayed.attempt_ordinal, replayed.revision) == (
        "submitting_fenced_replay", 2, child.revision + 1)
    assert replayed.axes.remote_effect == "UNDETERMINED"
    again = replay(journal, replayed, lease)
    assert (again.state_name, again.attempt_ordinal, again.revision) == (
        "submitting_fenced_replay", 3, replayed.revision + 1)
    attempts = journal.list_attempts(first)
    assert [a["attempt_ordinal"] for a in attempts] == [1, 2, 3]
    assert [a["outcome"] for a in attempts] == ["submitting_fenced_replay", "replay_again", None]
    assert len({a["attempt_id"] for a in attempts}) == 3
    assert {(a["lease_holder"], a["lease_token"]) for a in attempts} == {(lease.holder,
                                                                          lease.token)}
    held = reservations(first)
    assert held == {attempts[0]["attempt_id"]: "fenced_replay",
                    attempts[1]["attempt_id"]: "fenced_replay", attempts[2]["attempt_id"]: None}
    blocked_lease = journal.acquire_lease(second, "mutation", "worker-2", 60)
    with pytest.raises(DponeError) as full:
        submit(journal, second, lease=blocked_lease)
    assert _code(full) == "journal.capacity_exhausted"
    done = step(journal, again, "replay_sync_success", "submit_response",
                "SYNC_SUCCESS_WITH_COUNTERS", ["response_recorded"], lease)
    observer = journal.acquire_lease(first, "observation", "verifier", 60)
    step(journal, done, "verifying_succeeded_verified_full", "verification",
         "FULL_EFFECT_VERIFIED", ["verification_recorded", "all_rows_accounted"], observer)
    assert list(reservations(first).values()).count(None) == 0
    assert journal.list_attempts(first)[2]["outcome"] == "replay_sync_success"
    assert submit(journal, second, lease=blocked_lease)[0].state_name == "submitting"


def test_a_replay_needs_fenced_replay(journal: DeliveryJournalPort,
                                      reservations: Reservations) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    before = reservations(operation_id)
    with pytest.raises(DponeError) as unfenced:
        replay(journal, child, lease, fenced_replay=False)
    assert _code(unfenced) == "journal.illegal_transition"
    assert "observation or reconciliation only" in unfenced.value.message
    with pytest.raises(DponeError) as direct:
        step(journal, child, "submitting_fenced_replay", "transport",
             "CERTIFIED_FENCE_PERMITS_REPLAY", REPLAY_FACTS, lease)
    assert _code(direct) == "journal.illegal_transition"
    assert journal.get_child(operation_id) == child
    assert [a["outcome"] for a in journal.list_attempts(operation_id)] == [None]
    assert reservations(operation_id) == before
    replayed = replay(journal, child, lease)
    with pytest.raises(DponeError) as again:
        replay(journal, replayed, lease, fenced_replay=False)
    assert _code(again) == "journal.illegal_transition"
    assert journal.get_child(operation_id) == replayed


def test_fenced_replay_is_refused_before_submitting(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10), (10, 20)])).parent
    sealed = parent.children[0]
    lease = journal.acquire_lease(sealed.operation_id, "mutation", "worker-1", 60)
    with pytest.raises(DponeError) as from_sealed:
        replay(journal, sealed, lease)
    assert _code(from_sealed) == "journal.illegal_transition"
    assert journal.get_child(sealed.operation_id) == sealed
    assert journal.list_attempts(sealed.operation_id) == []
    child, other = submit(journal, parent.children[1].operation_id)
    waiting = step(journal, child, "submitting_not_started_retry", "transport",
                   "REQUEST_NOT_STARTED", ["request_not_started_proof", "retry_budget_remaining"],
                   other)
    with pytest.raises(DponeError) as from_retry_wait:
        replay(journal, waiting, other)
    assert _code(from_retry_wait) == "journal.illegal_transition"
    assert journal.get_child(waiting.operation_id) == waiting


def test_only_the_submitting_lease_may_replay(journal: DeliveryJournalPort,
                                              reservations: Reservations) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    plan = journal.plan_attempt(operation_id, lease)
    before = reservations(operation_id)
    journal.release_lease(lease)
    for holder in ("worker-2", "worker-1"):  # another worker, or the same one under a new token
        takeover = journal.acquire_lease(operation_id, "mutation", holder, 60)
        with pytest.raises(DponeError) as planned:
            journal.plan_attempt(operation_id, takeover)
        assert _code(planned) == "journal.lease_lost"
        with pytest.raises(DponeError) as entered:
            journal.enter_submitting(plan, marker_digest(plan.marker), takeover, child.revision,
                                     fenced_replay=True)
        assert _code(entered) == "journal.lease_lost"
        journal.release_lease(takeover)
    with pytest.raises(DponeError) as released:
        journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision,
                                 fenced_replay=True)
    assert _code(released) == "journal.lease_lost"
    assert journal.get_child(operation_id) == child
    assert reservations(operation_id) == before


def test_a_blocked_gate_refuses_the_replay_atomically(journal: DeliveryJournalPort,
                                                      reservations: Reservations) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    plan = journal.plan_attempt(operation_id, lease)
    before = reservations(operation_id)
    journal.set_mutation_gate(ENVIRONMENT, "BLOCKED", epoch=0, actor="sre", reason="restore")
    with pytest.raises(DponeError) as blocked:
        journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision,
                                 fenced_replay=True)
    assert _code(blocked) == "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED"
    assert journal.get_child(operation_id) == child
    assert [a["outcome"] for a in journal.list_attempts(operation_id)] == [None]
    assert reservations(operation_id) == before


@pytest.mark.parametrize("replays", [0, 1])
def test_a_throttle_beyond_the_budget_is_a_terminal_record(
        journal: DeliveryJournalPort, reservations: Reservations, replays: int) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    for _ in range(replays):
        child = replay(journal, child, lease)
    transition_id = ("replay_throttled_beyond_budget" if replays
                     else "submitting_throttled_beyond_budget")
    observer = journal.acquire_lease(operation_id, "observation", "observer", 60)
    with pytest.raises(DponeError) as wrong_lease:
        step(journal, child, transition_id, *THROTTLED, observer, error_code=BUDGET_CODE)
    assert _code(wrong_lease) == "journal.illegal_transition"
    with pytest.raises(DponeError) as no_budget_fact:
        step(journal, child, transition_id, "submit_response", "RETRY_AFTER_EXCEEDS_BUDGET",
             ["response_recorded"], lease, error_code=BUDGET_CODE)
    assert _code(no_budget_fact) == "journal.illegal_transition"
    final = step(journal, child, transition_id, *THROTTLED, lease, error_code=BUDGET_CODE)
    assert (final.state_name, final.last_error_code) == (
        "final_not_accepted_unknown_unverified", BUDGET_CODE)
    assert (final.axes.remote_effect, final.attempt_ordinal) == ("UNKNOWN", replays + 1)
    attempts = journal.list_attempts(operation_id)
    assert attempts[-1]["outcome"] == transition_id
    # An UNKNOWN effect keeps the reservation: the receiver job may still run.
    assert list(reservations(operation_id).values()).count(None) == 1
    with pytest.raises(DponeError) as no_more:
        replay(journal, final, lease)
    assert _code(no_more) == "journal.illegal_transition"


def test_the_throttle_record_is_the_submitting_lease_s_only(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    journal.release_lease(lease)
    takeover = journal.acquire_lease(operation_id, "mutation", "worker-2", 60)
    with pytest.raises(DponeError) as lost:
        step(journal, child, "submitting_throttled_beyond_budget", *THROTTLED, takeover,
             error_code=BUDGET_CODE)
    assert _code(lost) == "journal.lease_lost"
    assert journal.get_child(operation_id) == child


def test_now_reads_the_database_clock(journal: DeliveryJournalPort) -> None:
    before = dt.datetime.now(dt.UTC)
    moment = journal.now()
    after = dt.datetime.now(dt.UTC)
    assert moment.tzinfo is not None
    assert moment.utcoffset() == dt.timedelta(0)
    assert before - dt.timedelta(seconds=5) < moment < after + dt.timedelta(seconds=5)
    later = journal.now()
    assert later >= moment


def test_a_due_time_from_the_journal_clock_gates_the_retry(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    step(journal, child, "submitting_not_started_retry", "transport", "REQUEST_NOT_STARTED",
         ["request_not_started_proof", "retry_budget_remaining"], lease,
         next_check_after=journal.now() - dt.timedelta(seconds=1))
    retried, _ = submit(journal, operation_id, lease=lease)
    assert (retried.state_name, retried.attempt_ordinal) == ("submitting", 2)
    assert sync_success(journal, retried, lease).state_name == "verifying_succeeded"


def test_a_replay_of_a_delivery_admitted_without_a_certified_fence_is_refused(
        journal: DeliveryJournalPort, reservations: Reservations) -> None:
    parent = journal.admit_parent(admission([(0, 10)], replay_fence_certified=False)).parent
    child, lease = submit(journal, parent.children[0].operation_id)
    with pytest.raises(DponeError) as refused:
        replay(journal, child, lease)
    assert _code(refused) == "REST_DELIVERY_UNSAFE_RETRY"
    after = journal.get_child(child.operation_id)
    assert (after.state_name, after.attempt_ordinal, after.revision) == (
        "submitting", 1, child.revision)
    assert [a["attempt_ordinal"] for a in journal.list_attempts(child.operation_id)] == [1]
    assert list(reservations(child.operation_id).values()) == [None]


def test_a_replay_beyond_the_admitted_submit_attempts_is_refused(
        journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)], max_submit_attempts=2)).parent
    child, lease = submit(journal, parent.children[0].operation_id)
    second = replay(journal, child, lease)
    assert second.attempt_ordinal == 2
    with pytest.raises(DponeError) as refused:
        replay(journal, second, lease)
    assert _code(refused) == "REST_DELIVERY_UNSAFE_RETRY"
    assert journal.get_child(child.operation_id).attempt_ordinal == 2
