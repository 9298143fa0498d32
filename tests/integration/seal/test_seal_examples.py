"""Sealing the examples for August 2026: coverage, round trips, limits and identities."""

from __future__ import annotations

import datetime as dt

import pytest

from dpone.contracts import content_digest
from dpone.contracts.children import ChildPlan, DaySlice
from dpone.contracts.sealed import PAYLOAD_SCHEMA_ID
from dpone.plans import limit_violations, verify_coverage
from support.seal import EXAMPLE_NAMES, INTERVAL, Sealed, comparable_schema, read_payload

pytestmark = pytest.mark.parametrize("name", EXAMPLE_NAMES)


def _child_plan(sealed: Sealed) -> ChildPlan:
    topology = sealed.topology
    return ChildPlan(planner_algorithm_version=topology.planner_algorithm_version,
                     children=tuple(c.descriptor for c in topology.children),
                     coverage=topology.coverage, requests=len(topology.children))


def test_coverage_is_verified(name: str, sealed_examples: dict[str, Sealed]) -> None:
    sealed = sealed_examples[name]
    days = [DaySlice(day=e.date, first_row=e.first_row, row_count=e.row_count)
            for e in sealed.parent.scope_index]
    verify_coverage(_child_plan(sealed), days, sealed.parent.row_count, *INTERVAL)
    assert sealed.topology.coverage.complete
    assert sum(c.descriptor.row_count for c in sealed.topology.children) == sealed.parent.row_count
    assert sealed.parent.row_count > 0


def test_every_payload_decodes_to_its_parent_rows(name: str,
                                                  sealed_examples: dict[str, Sealed]) -> None:
    sealed = sealed_examples[name]
    parent = sealed.parent_table()
    schema = comparable_schema(parent)
    payload_format = sealed.plan.profile.snapshot.request.body.payload_format.format
    for child in sealed.topology.children:
        decoded = sealed.decoded(child)
        assert len(decoded) == child.descriptor.decoded_bytes
        table = read_payload(decoded, payload_format, schema)
        expected = parent.slice(child.descriptor.first_row, child.descriptor.row_count)
        assert table.to_pylist() == expected.cast(schema).to_pylist(), child.descriptor.ordinal


def test_no_child_exceeds_a_hard_limit(name: str, sealed_examples: dict[str, Sealed]) -> None:
    sealed = sealed_examples[name]
    assert limit_violations(_child_plan(sealed), sealed.plan.effective_limits) == ()


def test_payload_documents_match_the_children(name: str,
                                              sealed_examples: dict[str, Sealed]) -> None:
    sealed = sealed_examples[name]
    for child in sealed.topology.children:
        raw = sealed.store.get_bytes(child.document.key)
        assert child.document.key == f"payloads/sha256/{content_digest(raw)[7:]}.json"
        document = sealed.document(child)
        assert document.schema_id == PAYLOAD_SCHEMA_ID
        assert document.canonical_bytes() == raw
        assert document.child == child.descriptor
        assert document.payload == child.payload
        assert document.identities == child.identities
        assert document.lineage.parent_digest == sealed.parent.artifact.digest
        assert document.lineage.plan_digest == sealed.plan_digest
        assert document.wire_bytes == child.request.content_length == child.descriptor.wire_bytes
        assert child.payload.key == f"payloads/sha256/{child.payload.digest[7:]}." + (
            "csv.gz" if name == "measurements_async" else "ndjson")
        generation = document.identities.generation
        assert generation.scheduled_interval_end_utc == dt.datetime(2026, 9, 1, tzinfo=dt.UTC)


def test_identities_are_distinct_per_child(name: str, sealed_examples: dict[str, Sealed]) -> None:
    children = sealed_examples[name].topology.children
    for field in ("delivery_key", "receiver_mutation_key", "mutation_intent_digest"):
        values = {getattr(c.identities, field) for c in children}
        assert len(values) == len(children), field


def test_multipart_request_is_rendered(name: str, sealed_examples: dict[str, Sealed]) -> None:
    sealed = sealed_examples[name]
    for child in sealed.topology.children:
        request = child.request
        if name == "measurements_sync":
            assert request.filename is None and request.multipart_boundary is None
            assert request.headers == {"X-Delivery-Key": child.identities.delivery_key}
            assert request.path == "/mock/v1/batches/measurement_readings"
            continue
        key_hex = child.identities.receiver_mutation_key.removeprefix("sha256:")
        assert request.filename == f"{key_hex}.csv.gz"
        assert request.content_type == f"multipart/form-data; boundary={request.multipart_boundary}"
        last_day = child.descriptor.scope_to - dt.timedelta(days=1)  # inclusive_date_window
        assert request.scalar_parts == (("range_start", child.descriptor.scope_from.isoformat()),
                                        ("range_end", last_day.isoformat()))
