"""``deliver_sync``: ``deliver`` for a synchronous batch profile only."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dpone.contracts import DponeError
from dpone.executor.supervisor import DeliveryCompleted, deliver_sync
from support.supervisor import HOLDER, Supervised

Make = Callable[..., Supervised]


def test_a_sync_plan_is_delivered_as_deliver_does(supervised: Make) -> None:
    s = supervised("sync")

    result = deliver_sync(s.plan, s.topology, s.journal, s.store, s.transport, holder=HOLDER)

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == len(s.topology.children)
    assert s.outcomes(1) == [(1, "submitting_sync_success")]
    assert s.receiver.count("POST") == len(s.topology.children)


def test_another_family_is_refused_before_admission_or_any_request(supervised: Make) -> None:
    s = supervised("async")

    with pytest.raises(DponeError) as refused:
        deliver_sync(s.plan, s.topology, s.journal, s.store, s.transport, holder=HOLDER)

    assert refused.value.code == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert s.plan.profile.snapshot.ref in refused.value.message
    assert not s.journal.list_deliveries(10)
    assert s.receiver.requests == []
