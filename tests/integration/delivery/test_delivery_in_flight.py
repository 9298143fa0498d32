"""Synchronous batches with several children in flight (the profile's certified
``max_in_flight_children``), against the real receiver on both journals.

A barrier in front of the real transport holds the first requests until ``WIDTH`` of them are
in flight together: a run that sent one child at a time would never pass it (the test fails on
the barrier's timeout instead of passing by luck of timing).
"""

from __future__ import annotations

import threading
from typing import Final

from dpone.contracts import RemoteEffect
from dpone.contracts.journal import ChildOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted
from dpone.executor.transport import OutboundRequest, RestTransportPort, TransportOutcome
from support.delivery import FULL, Harness, HarnessFactory

WIDTH: Final = 4
BARRIER_TIMEOUT_S: Final = 30.0


def wide(plan: RestDeliveryPlan, width: int = WIDTH) -> RestDeliveryPlan:
    """``plan`` whose profile certifies ``width`` children (requests, remote-job slots) at once."""
    snapshot = plan.profile.snapshot
    rate = snapshot.rate.model_copy(update={"max_active_requests": width,
                                            "max_active_remote_jobs": width})
    profile = plan.profile.model_copy(update={"snapshot": snapshot.model_copy(
        update={"max_in_flight_children": width, "rate": rate})})
    return plan.model_copy(update={"profile": profile})


class Together:
    """The real transport behind a barrier: the first ``width`` sends wait until all of them
    have been handed over, so they are in flight at the same time; later sends pass."""

    def __init__(self, inner: RestTransportPort, width: int = WIDTH) -> None:
        self._inner = inner
        self._barrier = threading.Barrier(width, timeout=BARRIER_TIMEOUT_S)
        self._lock = threading.Lock()
        self._sent = 0
        self.keys: list[str] = []

    def send(self, request: OutboundRequest) -> TransportOutcome:
        with self._lock:
            self._sent += 1
            first = self._sent <= self._barrier.parties
            self.keys.append(dict(request.headers)["X-Delivery-Key"])
        if first:
            self._barrier.wait()  # BrokenBarrierError: they were never in flight together
        return self._inner.send(request)

    def close(self) -> None:
        self._inner.close()


def _wide(harness: HarnessFactory) -> tuple[Harness, Together]:
    h = harness("sync", FULL)
    h.plan = wide(h.plan)
    assert len(h.topology.children) > WIDTH
    return h, Together(h.transport)


def test_children_are_sent_up_to_the_certified_width_at_once_and_all_promoted(
        harness: HarnessFactory) -> None:
    h, together = _wide(harness)

    result = h.run(transport=together)

    assert isinstance(result, DeliveryCompleted), result
    children = len(h.topology.children)
    assert result.checkpoint_frontier == children
    assert [receipt.ordinal for receipt in result.children] == list(range(1, children + 1))
    assert h.journal.load_parent(result.parent_id).checkpoint_frontier == children
    ledger = h.ledger()
    assert ledger["duplicate_mutations"] == 0
    assert ledger["rows_by_key"] == {h.sealed.mutation_key(c.descriptor.ordinal): c.descriptor.row_count
                                     for c in h.topology.children}
    assert h.count("POST") == children
    assert len(together.keys) == children


def test_a_commit_then_drop_among_four_in_flight_starts_no_request_after_it(
        harness: HarnessFactory) -> None:
    h, together = _wide(harness)
    h.fail_submit("commit_then_drop")  # whichever of the four requests the receiver reads first

    result = h.run(transport=together)

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert result.remote_effect is RemoteEffect.UNKNOWN
    unknown = int(result.evidence["ordinal"])
    assert 1 <= unknown <= WIDTH
    # No request started after it: the four in flight are all the receiver ever saw.
    assert h.count("POST") == WIDTH
    assert len(together.keys) == WIDTH
    # The others in flight finished and were recorded, applied once each (the dropped one too).
    ledger = h.ledger()
    assert ledger["duplicate_mutations"] == 0
    assert set(ledger["rows_by_key"]) == {h.sealed.mutation_key(o) for o in range(1, WIDTH + 1)}
    for ordinal in range(1, WIDTH + 1):
        if ordinal != unknown:
            assert h.outcomes(ordinal) == [(1, "submitting_sync_success")]
            assert h.child(ordinal).axes.remote_effect == "FULLY_APPLIED"
    assert h.child(unknown).axes.remote_effect == "UNKNOWN"
    # Nothing after the window was sent: a child the driver started as another finished, before
    # the drop was recorded, was withheld at the send gate (RETRY_WAIT, nothing applied).
    for ordinal in range(WIDTH + 1, len(h.topology.children) + 1):
        after = h.child(ordinal)
        assert (after.state_name, after.attempt_ordinal) in {("sealed", 0), ("retry_wait", 1)}
        assert after.axes.remote_effect == "NONE_PROVEN"
    # The frontier is contiguous: it stops before the unknown child.
    assert result.checkpoint_frontier == unknown - 1
    assert h.journal.load_parent(result.parent_id).checkpoint_frontier == unknown - 1

    # A second run meets the unknown effect in the journal before it starts anything new.
    again = h.run()
    assert isinstance(again, DeliveryBlocked) and again.code == result.code
    assert again.operation_id == result.operation_id
    assert h.count("POST") == WIDTH


def test_a_child_about_to_send_when_another_becomes_unknown_never_sends(
        harness: HarnessFactory) -> None:
    """Child 2 has entered SUBMITTING (its MAY_ATTEMPT marker is published) but not yet sent
    when child 1's request is committed and dropped: child 2's request never starts; its attempt
    is recorded as not started and it waits in RETRY_WAIT for the next run."""
    h = harness("sync", FULL)
    h.plan = wide(h.plan, 2)
    h.fail_submit("commit_then_drop")
    unknown_recorded = threading.Event()

    def on_step(operation: ChildOperation, transition_id: str) -> None:
        if operation.ordinal == 1 and operation.axes.remote_effect == "UNKNOWN":
            unknown_recorded.set()
        if operation.ordinal == 2 and transition_id == "enter_submitting":
            assert unknown_recorded.wait(BARRIER_TIMEOUT_S), "child 1 was never recorded"

    result = h.run(on_step=on_step)

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert result.evidence["ordinal"] == 1
    assert result.checkpoint_frontier == 0
    assert h.count("POST") == 1
    assert set(h.ledger()["rows_by_key"]) == {h.sealed.mutation_key(1)}
    withheld = h.child(2)
    assert withheld.state_name == "retry_wait"
    assert withheld.axes.remote_effect == "NONE_PROVEN"
    assert [attempt for attempt, _ in h.outcomes(2)] == [1]
    for ordinal in range(3, len(h.topology.children) + 1):
        assert h.child(ordinal).state_name == "sealed"
