"""A long-running job does not write a journal revision per receipt poll, on both journals.

An unchanged running answer is counted, not recorded; a record comes with a new phase or an
ending, every ``RECORD_EVERY`` th poll, and at the last poll ``max_observations`` allows, and it
advances ``observation_ordinal`` by every poll it covers: the ordinal still equals the GETs the
receiver saw, so the bound on polls holds across runs.
"""

from __future__ import annotations

import pytest

from dpone.contracts.journal import ChildOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.supervisor import DeliveryBlocked, QuietPolls, observe_receipt
from dpone.executor.supervisor._quiet import RECORD_EVERY
from dpone.receiver import ReceiverThread
from support.delivery import HOLDER, Harness, HarnessFactory


class WorkerLost(Exception):
    """The worker stops right after the first receipt is durable."""


def _stop_after_first_receipt(operation: ChildOperation, transition_id: str) -> None:
    if operation.ordinal == 1 and transition_id == "submitting_async_receipt_accepted":
        raise WorkerLost


def _profile(h: Harness, *, max_observations: int, poll_interval_s: int) -> RestDeliveryPlan:
    snapshot = h.plan.profile.snapshot
    snapshot = snapshot.model_copy(update={
        "observability": snapshot.observability.model_copy(
            update={"max_observations": max_observations}),
        "timeouts": snapshot.timeouts.model_copy(update={"poll_interval_s": poll_interval_s})})
    return h.plan.model_copy(update={
        "profile": h.plan.profile.model_copy(update={"snapshot": snapshot})})


def _polls(h: Harness, child: ChildOperation) -> list[int]:
    """The polls each kept observation of ``child`` covers, oldest first."""
    return [int(o["document"].get("polls", 1))
            for o in h.journal.list_observations(child.operation_id)]


def test_a_pending_job_is_recorded_at_changes_heartbeats_and_the_bound(
        harness: HarnessFactory, slow_receiver: ReceiverThread) -> None:
    h = harness("async", receiver=slow_receiver)
    bounded = _profile(h, max_observations=25, poll_interval_s=0)

    stopped = h.run(plan=bounded)

    assert isinstance(stopped, DeliveryBlocked) and stopped.code == "observation.limit_reached"
    child = h.child(1)
    gets = h.requests()[f"GET /mock/v1/dataset-jobs/{(child.receipt or {})['id']}"]
    assert gets == 25 == child.observation_ordinal  # every poll counted in the journal
    # The first answer, a heartbeat every RECORD_EVERY polls, and the last allowed poll.
    assert _polls(h, child) == [1, RECORD_EVERY, RECORD_EVERY, 25 - 1 - 2 * RECORD_EVERY]
    assert stopped.evidence["observations"] == 25

    again = h.run(plan=bounded)  # a later run: the bound is durable, nothing is polled

    assert isinstance(again, DeliveryBlocked) and again.code == "observation.limit_reached"
    assert h.requests()[f"GET /mock/v1/dataset-jobs/{(child.receipt or {})['id']}"] == 25
    assert h.child(1).revision == child.revision


def test_a_trigger_stepping_one_poll_at_a_time_writes_no_revision_per_poll(
        harness: HarnessFactory, slow_receiver: ReceiverThread) -> None:
    """What the Airflow trigger does: one ``observe_receipt`` per step, its ``QuietPolls`` kept
    from one step to the next; the job is then cancelled outside dpone and that is recorded."""
    h = harness("async", receiver=slow_receiver)
    with pytest.raises(WorkerLost):
        h.run(on_step=_stop_after_first_receipt)
    accepted = h.child(1)
    job = (accepted.receipt or {})["id"]
    plan = _profile(h, max_observations=500, poll_interval_s=0)
    quiet = QuietPolls()

    revisions = []
    for _ in range(6):
        step = observe_receipt(plan, accepted.operation_id, h.journal, h.store, h.transport,
                               holder=HOLDER, quiet=quiet)
        revisions.append(step.revision)

    assert h.requests()[f"GET /mock/v1/dataset-jobs/{job}"] == 6
    assert revisions == [accepted.revision + 1] * 6  # ACCEPTED -> WAITING, then nothing
    assert (quiet.count, h.child(1).observation_ordinal) == (5, 1)
    assert quiet.due is not None and quiet.next_due(None) == quiet.due

    h.fail_poll("cancel_job", apply_rows=0)  # cancelled outside dpone: an ending to record
    ended = observe_receipt(plan, accepted.operation_id, h.journal, h.store, h.transport,
                            holder=HOLDER, quiet=quiet)

    assert ended.state_name == "verifying_cancelled"
    assert ended.observation_ordinal == 7 == h.requests()[f"GET /mock/v1/dataset-jobs/{job}"]
    assert _polls(h, ended) == [1, 6]
    assert quiet.count == 0
