"""The orphan MAY_ATTEMPT markers a reconciliation covers: found in the artifact store from the
journal's ``attempt_ordinal + 1`` until a key is absent, each checked to bind the child's
operation and delivery key; and the query by key's absence proof with orphans, whose horizon
counts from their planning time (current epoch) or which proves nothing at all (an orphan of
another journal epoch)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest

from dpone.contracts import DponeError, canonical_json, content_digest
from dpone.contracts.journal import ChildOperation, may_attempt_marker_key
from dpone.executor.reconcile import (
    absence_time_base,
    find_orphans,
    prove_by_key_query,
    untimed_absence,
)
from support.supervisor import Supervised, reply

Make = Callable[..., Supervised]
SENT = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.UTC)
"""When the child's latest attempt started (the profile: TTL 600 s + skew 60 s)."""
PLANNED = SENT + dt.timedelta(seconds=300)
"""When an orphan's attempt was planned, after the latest attempt started."""


@pytest.fixture
def delivered(supervised: Make) -> Supervised:
    s = supervised("async")
    s.run()
    return s


def _marker(child: ChildOperation, ordinal: int, *, epoch: int = 0,
            planned: dt.datetime = PLANNED, **changed: Any) -> dict[str, Any]:
    return {"schema": "dpone.may_attempt_marker.v1", "operation_id": child.operation_id,
            "operation_namespace": child.tenancy.operation_namespace,
            "delivery_key": child.delivery_key,
            "receiver_mutation_key": child.receiver_mutation_key,
            "mutation_intent_digest": child.mutation_intent_digest, "attempt_ordinal": ordinal,
            "journal_epoch": epoch,
            "created_at": planned.isoformat().replace("+00:00", "Z"), **changed}


def _publish(s: Supervised, child: ChildOperation, ordinal: int, document: dict[str, Any]) -> str:
    key = may_attempt_marker_key(child.tenancy.operation_namespace, child.operation_id, ordinal)
    return s.store.put_bytes(key, canonical_json(document)).digest


def test_orphans_are_the_contiguous_markers_above_the_attempt_ordinal(
        delivered: Supervised) -> None:
    child = delivered.child(1)
    assert find_orphans(delivered.store, child) == ()
    digests = [_publish(delivered, child, n, _marker(child, n, epoch=n))
               for n in (child.attempt_ordinal + 1, child.attempt_ordinal + 2)]
    _publish(delivered, child, child.attempt_ordinal + 4,  # after a gap: not probed
             _marker(child, child.attempt_ordinal + 4))

    found = find_orphans(delivered.store, child)

    assert [(o.marker.attempt_ordinal, o.marker.marker_digest, o.journal_epoch, o.planned_at)
            for o in found] == [(child.attempt_ordinal + 1, digests[0], 2, PLANNED),
                                (child.attempt_ordinal + 2, digests[1], 3, PLANNED)]
    assert found[0].marker.marker_key.endswith(
        f"/{child.operation_id}/{child.attempt_ordinal + 1}.json")
    assert untimed_absence(found, 2) == (found[1].marker.marker_key,)
    assert absence_time_base(SENT, found) == PLANNED
    assert absence_time_base(PLANNED + dt.timedelta(seconds=1), found) > PLANNED


@pytest.mark.parametrize("changed", [
    {"operation_id": "op_v1_" + "0" * 64 + "_0001"},
    {"delivery_key": "sha256:" + "1" * 64},
    {"attempt_ordinal": 7},
    {"schema": "dpone.something_else.v1"},
    {"created_at": "yesterday"},
], ids=["operation", "delivery_key", "ordinal", "schema", "created_at"])
def test_a_marker_of_another_key_at_the_childs_marker_key_is_refused(
        delivered: Supervised, changed: dict[str, Any]) -> None:
    child = delivered.child(1)
    _publish(delivered, child, child.attempt_ordinal + 1,
             _marker(child, child.attempt_ordinal + 1, **changed))

    with pytest.raises(DponeError) as refused:
        find_orphans(delivered.store, child)

    assert refused.value.code == "reconcile.orphan_marker_foreign"
    assert refused.value.details["mismatched"] == sorted(changed)


def test_absence_counts_from_an_orphan_planned_after_the_latest_attempt(
        delivered: Supervised) -> None:
    child = delivered.child(1)
    _publish(delivered, child, child.attempt_ordinal + 1,
             _marker(child, child.attempt_ordinal + 1))
    found = find_orphans(delivered.store, child)
    between = SENT + dt.timedelta(seconds=700)  # past the attempt's horizon, not the orphan's
    delivered.receiver.polls = [reply(404, {"error": "not_found"})]

    with pytest.raises(DponeError) as early:
        prove_by_key_query(delivered.plan, delivered.transport, child,
                           delivered.topology.children[0], now=between,
                           latest_attempt_at=absence_time_base(SENT, found))

    assert early.value.code == "reconcile.absence_unproven"
    assert early.value.details["proof_possible_at"] == (
        PLANNED + dt.timedelta(seconds=660)).isoformat()


def test_an_orphan_of_another_epoch_makes_absence_prove_nothing(delivered: Supervised) -> None:
    child = delivered.child(1)
    _publish(delivered, child, child.attempt_ordinal + 1,
             _marker(child, child.attempt_ordinal + 1, epoch=0))
    found = find_orphans(delivered.store, child)
    delivered.receiver.polls = [reply(404, {"error": "not_found"})]

    with pytest.raises(DponeError) as refused:
        prove_by_key_query(delivered.plan, delivered.transport, child,
                           delivered.topology.children[0], now=SENT + dt.timedelta(days=30),
                           latest_attempt_at=absence_time_base(SENT, found),
                           untimed_orphans=untimed_absence(found, current_epoch=1))

    assert refused.value.code == "reconcile.absence_unproven"
    assert refused.value.details["reason"] == "orphan_of_another_epoch"
    assert refused.value.details["orphan_marker_keys"] == [found[0].marker.marker_key]
    assert content_digest(delivered.store.get_bytes(found[0].marker.marker_key)) == (
        found[0].marker.marker_digest)
