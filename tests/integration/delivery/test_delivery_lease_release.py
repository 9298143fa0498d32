"""The leases of a finished attempt are released when the attempt ends, on every exit path
(delivered, stopped by a catalog error, or cut short by an unexpected exception), so a rerun or
another worker can take them at once instead of waiting for them to expire."""

from __future__ import annotations

import pytest

from dpone.contracts import DponeError
from dpone.executor.supervisor import DeliveryCompleted
from dpone.executor.transport import OutboundRequest, TransportOutcome
from support.delivery import Harness, HarnessFactory

OTHER = "another-worker"


def _free_at_once(h: Harness, ordinal: int) -> None:
    """Another holder takes the child's mutation lease now: it was held (token 2) and released."""
    taken = h.journal.acquire_lease(h.child(ordinal).operation_id, "mutation", OTHER, 60)
    assert taken.token == 2, "the run never held this child's mutation lease"
    h.journal.release_lease(taken)


class _Crashing:
    """A transport that fails with an unexpected (non-catalog) exception on its first send."""

    def send(self, request: OutboundRequest) -> TransportOutcome:
        raise RuntimeError("the transport crashed")

    def close(self) -> None:
        return None


class _Refusing:
    """A transport that stops the run with a catalog error on its first send."""

    def send(self, request: OutboundRequest) -> TransportOutcome:
        raise DponeError(code="credential.unavailable", message="no token")

    def close(self) -> None:
        return None


@pytest.mark.parametrize("family", ["sync", "async"])
def test_a_delivered_child_leaves_no_mutation_lease_behind(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family)
    result = h.run()
    assert isinstance(result, DeliveryCompleted)
    for child in h.parent().children:
        _free_at_once(h, child.ordinal)


@pytest.mark.parametrize("transport", [_Crashing, _Refusing])
def test_the_mutation_lease_is_released_when_the_attempt_raises(
        harness: HarnessFactory, transport: type[_Crashing | _Refusing]) -> None:
    h = harness("sync")
    with pytest.raises((RuntimeError, DponeError)):
        h.run(transport=transport())
    _free_at_once(h, 1)
