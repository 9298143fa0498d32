"""One read-only receipt observation (what an orchestrator's trigger runs), on both journals:
one GET of the accepted job recorded by CAS, never a submit, a verification or a promotion; a
child that is not observing, or not yet due, is returned without a request."""

from __future__ import annotations

import datetime as dt

import pytest

from dpone.contracts.journal import ChildOperation
from dpone.executor.supervisor import observe_receipt
from dpone.receiver import ReceiverThread
from support.delivery import HOLDER, Harness, HarnessFactory


class WorkerLost(Exception):
    """The worker stops right after the first receipt is durable."""


def _stop_after_first_receipt(operation: ChildOperation, transition_id: str) -> None:
    if operation.ordinal == 1 and transition_id == "submitting_async_receipt_accepted":
        raise WorkerLost


def _observe(h: Harness, operation_id: str) -> ChildOperation:
    return observe_receipt(h.plan, operation_id, h.journal, h.store, h.transport, holder=HOLDER)


def test_one_observation_records_the_finished_job_and_sends_nothing_else(
        harness: HarnessFactory) -> None:
    h = harness("async")
    with pytest.raises(WorkerLost):
        h.run(on_step=_stop_after_first_receipt)
    accepted = h.child(1)
    job = (accepted.receipt or {})["id"]
    assert accepted.state_name == "accepted"

    observed = _observe(h, accepted.operation_id)

    assert observed.state_name == "verifying_succeeded"
    assert observed.revision > accepted.revision
    assert h.requests().get(f"GET /mock/v1/dataset-jobs/{job}") == 1
    assert h.count("POST") == 1  # the second child is not submitted
    assert h.parent().checkpoint_frontier == 0  # nothing verified or promoted
    assert h.child(2).state_name == "sealed"
    # A duplicate trigger finds the child out of observation: no request, no step.
    again = _observe(h, accepted.operation_id)
    assert (again.state_name, again.revision) == (observed.state_name, observed.revision)
    assert h.requests().get(f"GET /mock/v1/dataset-jobs/{job}") == 1


def test_a_running_job_is_polled_once_per_call(harness: HarnessFactory,
                                               slow_receiver: ReceiverThread) -> None:
    h = harness("async", receiver=slow_receiver)
    with pytest.raises(WorkerLost):
        h.run(on_step=_stop_after_first_receipt)
    accepted = h.child(1)
    job = (accepted.receipt or {})["id"]

    observed = _observe(h, accepted.operation_id)

    assert observed.state_name in ("accepted", "waiting")
    assert observed.observation_ordinal == accepted.observation_ordinal + 1
    assert h.requests().get(f"GET /mock/v1/dataset-jobs/{job}") == 1


def test_a_receipt_not_yet_due_is_not_polled(harness: HarnessFactory,
                                             slow_receiver: ReceiverThread) -> None:
    h = harness("async", receiver=slow_receiver)
    with pytest.raises(WorkerLost):
        h.run(on_step=_stop_after_first_receipt)
    accepted = h.child(1)
    job = (accepted.receipt or {})["id"]
    snapshot = h.plan.profile.snapshot
    hourly = h.plan.model_copy(update={"profile": h.plan.profile.model_copy(update={
        "snapshot": snapshot.model_copy(update={
            "timeouts": snapshot.timeouts.model_copy(update={"poll_interval_s": 3600})})})})

    running = observe_receipt(hourly, accepted.operation_id, h.journal, h.store, h.transport,
                              holder=HOLDER)
    assert running.next_check_after is not None
    assert running.next_check_after > h.journal.now() + dt.timedelta(minutes=59)
    again = observe_receipt(hourly, accepted.operation_id, h.journal, h.store, h.transport,
                            holder=HOLDER)

    assert again.revision == running.revision
    assert h.requests().get(f"GET /mock/v1/dataset-jobs/{job}") == 1
