"""A receipt poll answer about another job is never this child's success (on both journals).

The example profile certifies that a job status answer echoes the job's filename (the sealed
multipart filename, i.e. the child's receiver_mutation_key). A receiver that restarts and
numbers its jobs from the start again hands a later job the id this child still holds: its
answer carries another filename and the same row count. That is REST_DELIVERY_PROTOCOL_UNKNOWN
with the effect UNKNOWN, the checkpoint blocked, nothing recorded of the other job and nothing
resent; never FULLY_APPLIED on matching counters.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from dpone.contracts import RemoteEffect
from dpone.contracts.journal import ChildOperation
from dpone.executor.supervisor import DeliveryBlocked
from dpone.receiver import ReceiverConfig, ReceiverThread
from support.delivery import TOKEN, HarnessFactory, http_transport

ONE_JOB = (dt.date(2026, 8, 1), dt.date(2026, 8, 5))
REUSED_BOOT_ID = "0badc0de"
"""Both receiver starts use it: the restarted receiver numbers its jobs from 000001 again."""
THEIRS = "7b" * 32 + ".csv.gz"


class WorkerLost(Exception):
    """The worker stops right after a step (its process is gone)."""


@pytest.fixture
def before_restart() -> Iterator[ReceiverThread]:
    config = ReceiverConfig(token=TOKEN, processing_seconds=3600, boot_id=REUSED_BOOT_ID)
    with ReceiverThread(config) as running:
        yield running


@pytest.mark.parametrize("seen", ["accepted", "waiting"])
def test_a_reused_receipt_id_naming_another_job_is_protocol_unknown(
        harness: HarnessFactory, before_restart: ReceiverThread, seen: str) -> None:
    h = harness("async", ONE_JOB, receiver=before_restart)
    ours = h.topology.children[0]
    stop_at = "submitting_async_receipt_accepted" if seen == "accepted" else "accepted_poll_running"

    def stop(operation: ChildOperation, transition_id: str) -> None:
        if transition_id == stop_at:
            raise WorkerLost

    with pytest.raises(WorkerLost):
        h.run(on_step=stop)
    job = (h.child(1).receipt or {})["id"]
    assert job == f"job-{REUSED_BOOT_ID}-000001"
    before_restart.stop()  # the receiver restarts: our job is gone, its id is handed out again

    config = ReceiverConfig(token=TOKEN, processing_seconds=0, boot_id=REUSED_BOOT_ID)
    with ReceiverThread(config) as restarted:
        rows = h.sealed.decoded_rows(1)  # another delivery's job with the same row count
        other = restarted.state.jobs.create(
            filename=THEIRS, rows=rows, now=restarted.state.now(),
            scope={"range_start": "2026-09-01", "range_end": "2026-09-04"})
        restarted.state.jobs.settle(restarted.state.now())
        assert other.job_id == job and other.rows_accepted == ours.descriptor.row_count
        transport = http_transport(h.plan, restarted.base_url)
        try:
            result = h.run(transport=transport)
            again = h.run(transport=transport)
        finally:
            transport.close()
        requests = dict(restarted.state.ledger.snapshot()["requests"])

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert result.remote_effect is RemoteEffect.UNKNOWN
    assert result.checkpoint_frontier == 0
    assert result.evidence["key_echo"] == "mismatch"
    assert (1, f"{seen}_poll_protocol_unknown") in h.steps
    child = h.child(1)
    assert child.state_name == "final_protocol_unknown_unknown_unverified"
    assert child.axes.remote_effect == RemoteEffect.UNKNOWN
    assert child.axes.checkpoint_state == "BLOCKED"
    assert child.last_error_code == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    receipt = child.receipt or {}
    assert receipt.get("phase") in (None, "pending")  # nothing of the other job is ours
    assert receipt.get("accepted_rows") in (None, 0)
    last = h.journal.list_observations(child.operation_id)[-1]
    assert last["transition_id"] == f"{seen}_poll_protocol_unknown"
    assert last["document"]["reason"] == "key_echo_mismatch"
    assert last["document"]["outcome"] == "protocol_unknown"
    assert THEIRS not in str(last["document"])  # bounded scalars: no foreign values kept
    assert h.journal.load_parent(child.parent_id).checkpoint_frontier == 0

    assert isinstance(again, DeliveryBlocked) and again.code == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert requests == {f"GET /mock/v1/dataset-jobs/{job}": 1}  # one poll, nothing resent
    assert h.outcomes(1) == [(1, "submitting_async_receipt_accepted")]


def test_a_matching_echo_is_recorded_with_the_receipt(harness: HarnessFactory) -> None:
    h = harness("async", ONE_JOB)

    h.run()

    child = h.child(1)
    assert child.state_name == "final_succeeded_full_promoted"
    assert (child.receipt or {})["key_echo"] == "matched"
    assert all(o["document"].get("key_echo") == "matched"
               for o in h.journal.list_observations(child.operation_id))
