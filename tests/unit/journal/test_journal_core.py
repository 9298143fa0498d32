"""The pure journal core: deterministic ids, the marker document, fence rules, watermark map."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpone.contracts import content_digest
from dpone.contracts._base import canonical_json
from dpone.journal._fence import (
    Candidate,
    FenceRow,
    Interval,
    Scope,
    admission_refusal,
    merge_watermark,
    submit_refusal,
)
from dpone.journal._ids import attempt_id, child_operation_id, parent_operation_id
from dpone.journal._marker import marker_bytes, marker_digest, marker_document, marker_key
from dpone.journal._sql import migrations, parse_queries, queries

NS = content_digest(b"ns")
PLAN = content_digest(b"plan")
T0 = dt.datetime(2026, 2, 1, tzinfo=dt.UTC)
D0 = dt.date(2026, 1, 1)


def test_ids_are_deterministic_and_distinct() -> None:
    parent = parent_operation_id(NS, PLAN)
    assert parent == parent_operation_id(NS, PLAN)
    assert parent.startswith("op_v1_") and len(parent) == 6 + 64
    assert parent != parent_operation_id(content_digest(b"other"), PLAN)
    assert child_operation_id(parent, 7) == parent + "_0007"
    assert attempt_id(NS, parent + "_0001", 1) != attempt_id(NS, parent + "_0001", 2)
    assert marker_key(NS, "op", 3) == f"markers/{NS[7:]}/op/3.json"


def test_marker_binds_identity_and_is_canonical() -> None:
    marker = marker_document(
        operation_namespace=NS, tenant_id="t", environment_id="e", parent_id="p",
        parent_plan_digest=PLAN, operation_id="p_0001", ordinal=1, delivery_key=PLAN,
        receiver_mutation_key=PLAN, mutation_intent_digest=PLAN, generation_end=T0,
        correction_revision=0, attempt_ordinal=2, expected_revision=5, journal_epoch=3,
        created_at=T0)
    assert marker["attempt_id"] == attempt_id(NS, "p_0001", 2)
    assert (marker["expected_journal_revision"], marker["journal_epoch"]) == (5, 3)
    assert marker["created_at"] == "2026-02-01T00:00:00Z"
    assert marker_bytes(marker) == canonical_json(marker)
    assert marker_digest(marker) == content_digest(canonical_json(marker))


def _row(op: str, lo: int, hi: int, revision: int, *, state: str = "SEALED",
         effect: str = "NONE_PROVEN", kind: str = "partition_replace",
         parent: str = "p1") -> FenceRow:
    return FenceRow(operation_id=op, parent_id=parent, delivery_key=f"k-{op}",
                    mutation_intent_digest="i", mutation_kind=kind, generation=(T0, revision),
                    scope=Scope(D0 + dt.timedelta(lo), D0 + dt.timedelta(hi)),
                    execution_state=state, remote_effect=effect)


def _candidate(lo: int, hi: int, revision: int, kind: str = "partition_replace") -> Candidate:
    return Candidate(parent_id="p2", delivery_key="k-new", mutation_kind=kind,
                     generation=(T0, revision),
                     scope=Scope(D0 + dt.timedelta(lo), D0 + dt.timedelta(hi)), operation_id="new")


def test_fence_rules() -> None:
    higher = [_row("a", 0, 10, 2)]
    refusal = admission_refusal(_candidate(5, 6, 1), higher, [])
    assert refusal is not None and refusal.code == "REST_DELIVERY_STALE_GENERATION"
    assert admission_refusal(_candidate(10, 20, 1), higher, []) is None  # half-open: no overlap
    same = admission_refusal(_candidate(5, 6, 2), higher, [])
    assert same is not None and same.code == "REST_DELIVERY_INTENT_CONFLICT"
    in_flight = submit_refusal(_candidate(0, 10, 3), [_row("a", 0, 10, 2, state="WAITING")], [])
    assert in_flight is not None and in_flight.code == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT"
    unknown = [_row("a", 0, 10, 2, state="FINALIZED", effect="UNKNOWN")]
    assert submit_refusal(_candidate(0, 10, 3), unknown, []) is not None
    done = [_row("a", 0, 10, 2, state="FINALIZED", effect="FULLY_APPLIED")]
    assert submit_refusal(_candidate(0, 10, 3), done, []) is None
    mark = [Interval(Scope(D0, D0 + dt.timedelta(3)), (T0, 5))]
    stale = submit_refusal(_candidate(2, 4, 3), [], mark)
    assert stale is not None and stale.code == "REST_DELIVERY_STALE_GENERATION"
    applied = [_row("a", 0, 10, 0, state="FINALIZED", effect="FULLY_APPLIED",
                    kind="incremental_append")]
    append = admission_refusal(_candidate(0, 10, 0, "incremental_append"), applied, [])
    assert append is not None and append.code == "REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED"
    # The parts of one heavily split append day share its scope: a delivered part of the same
    # parent never refuses the next part.
    sibling = [_row("a", 0, 1, 0, state="FINALIZED", effect="FULLY_APPLIED",
                    kind="incremental_append", parent="p2")]
    assert submit_refusal(_candidate(0, 1, 0, "incremental_append"), sibling, []) is None


def test_a_stale_refusal_names_the_highest_overlapping_generation() -> None:
    """Every overlapping higher generation makes a candidate stale; the message and the
    conflicting operation are those of the highest, whatever order the rows come in."""
    admitted = [_row("rev0", 0, 10, 1), _row("rev2", 0, 10, 2), _row("rev1", 5, 6, 1)]
    for rows in itertools.permutations(admitted):
        refusal = submit_refusal(_candidate(0, 10, 0), list(rows), [])
        assert refusal is not None and refusal.code == "REST_DELIVERY_STALE_GENERATION"
        assert refusal.message.startswith(f"generation ({T0.isoformat()}, 2) is admitted")
        assert refusal.details["conflicting_operation_id"] == "rev2"
    applied = [Interval(Scope(D0, D0 + dt.timedelta(3)), (T0, 4))]
    higher_mark = admission_refusal(_candidate(0, 10, 0), admitted, applied)
    assert higher_mark is not None
    assert higher_mark.message.startswith(f"generation ({T0.isoformat()}, 4) is fully applied")
    equal_mark = [Interval(Scope(D0, D0 + dt.timedelta(3)), (T0, 2))]
    named = submit_refusal(_candidate(0, 10, 0), admitted, equal_mark)
    assert named is not None and named.details["conflicting_operation_id"] == "rev2"


_intervals = st.lists(st.tuples(st.integers(0, 40), st.integers(1, 10), st.integers(0, 5)),
                      max_size=8)


def _as_interval(lo: int, width: int, revision: int) -> Interval:
    return Interval(Scope(D0 + dt.timedelta(lo), D0 + dt.timedelta(lo + width)), (T0, revision))


@given(_intervals, st.tuples(st.integers(0, 40), st.integers(1, 10), st.integers(0, 5)))
def test_merge_watermark_is_normalized_pointwise_max(raw: list[tuple[int, int, int]],
                                                     new: tuple[int, int, int]) -> None:
    existing: list[Interval] = []
    for item in raw:  # build a normalized map first, as the journal does
        existing = merge_watermark(existing, _as_interval(*item))
    pieces = [*existing, _as_interval(*new)]
    merged = merge_watermark(existing, _as_interval(*new))
    for left, right in itertools.pairwise(merged):
        assert left.scope.hi <= right.scope.lo
        assert not (left.scope.hi == right.scope.lo and left.generation == right.generation)
    for offset in range(52):
        point = D0 + dt.timedelta(offset)
        covering = [p.generation for p in pieces if p.scope.lo <= point < p.scope.hi]
        found = [m.generation for m in merged if m.scope.lo <= point < m.scope.hi]
        assert found == ([max(covering)] if covering else [])


def test_named_queries_and_migrations_load() -> None:
    assert parse_queries("-- name: a\nSELECT 1;\n-- name: b\nSELECT 2;") == {
        "a": "SELECT 1;", "b": "SELECT 2;"}
    with pytest.raises(ValueError, match="defined twice"):
        parse_queries("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;")
    shipped = migrations("postgres")
    assert [m.version for m in shipped] == list(range(1, len(shipped) + 1))
    assert all(m.checksum.startswith("sha256:") for m in shipped)
    assert {"cas_child_audited", "acquire_lease", "overlapping_children"} <= set(queries("postgres"))
