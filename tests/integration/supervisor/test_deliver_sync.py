"""The synchronous batch supervisor against the mock receiver and a SQLite journal."""

from __future__ import annotations

import json
import random
import time
from collections import Counter

from _supervisor_support import Delivery

from dpone.contracts import RemoteEffect
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted, deliver_sync
from dpone.executor.transport import (
    Failure,
    FailureKind,
    OutboundRequest,
    RestTransportPort,
    TransportOutcome,
    TransportPhase,
)


def _key(row: dict[str, object]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False)


def test_full_delivery_applies_every_sealed_row_once_and_promotes_the_frontier(
        delivery: Delivery) -> None:
    topology = delivery.sealed.topology
    assert len(topology.children) > 1

    result = delivery.run()

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == len(topology.children)
    assert [child.ordinal for child in result.children] == [
        child.descriptor.ordinal for child in topology.children]
    assert all(child.receipt["accepted_rows"] == sealed.descriptor.row_count
               for child, sealed in zip(result.children, topology.children, strict=True))
    ledger = delivery.ledger()
    assert ledger["mutations_total"] == len(topology.children)
    assert ledger["duplicate_mutations"] == 0
    assert ledger["rows_total"] == topology.total_rows
    assert ledger["rows_by_key"] == {child.identities.delivery_key: child.descriptor.row_count
                                     for child in topology.children}
    applied = [row for mutation in ledger["mutations"] for row in mutation["records"]]
    assert all(mutation["records_complete"] for mutation in ledger["mutations"])
    assert Counter(map(_key, applied)) == Counter(map(_key, delivery.sealed.sealed_rows()))
    parent = delivery.journal.load_parent(result.parent_id)
    assert parent.checkpoint_frontier == len(topology.children)
    assert {child.state_name for child in parent.children} == {"final_succeeded_full_promoted"}


def test_a_second_run_resumes_the_admitted_parent_without_sending(delivery: Delivery) -> None:
    first = delivery.run()
    assert isinstance(first, DeliveryCompleted)
    posts_before = delivery.ledger()["requests"]

    again = delivery.run()

    assert isinstance(again, DeliveryCompleted)
    assert again.parent_id == first.parent_id
    assert delivery.ledger()["requests"] == posts_before


def test_commit_then_drop_on_the_first_post_blocks_with_unknown_effect_and_never_resends(
        delivery: Delivery) -> None:
    delivery.fail_next_post("commit_then_drop")

    result = delivery.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert result.remote_effect is RemoteEffect.UNKNOWN
    assert result.evidence["transport_phase"] == "may_have_reached"
    assert result.evidence["state_name"] == "final_not_accepted_unknown_unverified"
    assert result.evidence["attempt_ordinal"] == 1
    assert "reconcile_delivery_key" in result.allowed_actions
    assert result.checkpoint_frontier == 0
    ledger = delivery.ledger()
    assert ledger["mutations_total"] == 1
    assert sum(count for request, count in ledger["requests"].items()
               if request.startswith("POST ")) == 1
    first = delivery.sealed.topology.children[0]
    assert [m["key"] for m in ledger["mutations"]] == [first.identities.delivery_key]
    child = delivery.journal.get_child(result.operation_id or "")
    assert child.ordinal == 1
    assert child.last_error_code == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"

    again = delivery.run()

    assert isinstance(again, DeliveryBlocked)
    assert again.code == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert delivery.ledger()["mutations_total"] == 1
    assert delivery.journal.load_parent(result.parent_id).checkpoint_frontier == 0


class _RefusingFirst:
    """A transport whose first send provably never started; later sends go to the receiver."""

    def __init__(self, inner: RestTransportPort) -> None:
        self.inner, self.refused = inner, 0

    def send(self, request: OutboundRequest) -> TransportOutcome:
        if self.refused == 0:
            self.refused += 1
            return Failure(phase=TransportPhase.NOT_STARTED, kind=FailureKind.CONNECT,
                           detail="connection refused")
        return self.inner.send(request)

    def close(self) -> None:
        self.inner.close()


def test_a_request_that_never_started_is_retried_as_a_new_attempt(delivery: Delivery) -> None:
    sealed = delivery.sealed
    transport = _RefusingFirst(delivery.transport)

    result = deliver_sync(sealed.plan, sealed.topology, delivery.journal, sealed.store,
                          transport, holder="supervisor-test", sleep=time.sleep,
                          rng=random.Random(7))

    assert isinstance(result, DeliveryCompleted), result
    assert transport.refused == 1
    assert result.children[0].attempt_ordinal == 2
    first = delivery.journal.list_attempts(result.children[0].operation_id)
    assert [a["outcome"] for a in first][:1] == ["submitting_not_started_retry"]
    ledger = delivery.ledger()
    assert ledger["mutations_total"] == len(sealed.topology.children)
    assert ledger["duplicate_mutations"] == 0
