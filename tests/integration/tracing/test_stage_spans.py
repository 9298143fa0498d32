"""The stages outside the supervisor open their spans with ``dpone.*`` attributes and the right
parents, recorded in memory: ``dpone.compile`` (the compiler's entry point), ``dpone.freeze`` and
``dpone.seal`` (one each per sealed boundary, a ``dpone.seal.child`` per child published, even
from the sealer's publishing threads) and ``dpone.reconcile`` (`dpone delivery reconcile`); a
refused stage carries its catalog code, never its message."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from opentelemetry.trace import StatusCode

from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.observability import tracing
from dpone.receiver import ReceiverThread
from support.cli import FULL, Dpone
from support.common import EXAMPLES
from support.example_seal import seal_example
from support.reconcile import DROP_SYNC, reconcile
from support.spans import Recorded, parent_of

AUGUST = (dt.date(2026, 8, 1), dt.date(2026, 9, 1))


def _attributes(span: object) -> dict[str, object]:
    return dict(getattr(span, "attributes", None) or {})


def test_compile_is_one_span_naming_the_workload_and_its_plan(spans: Recorded) -> None:
    compiled = compile_workload(EXAMPLES / "workloads" / "measurements_sync.yaml", EXAMPLES)

    span = spans.one("dpone.compile")
    assert _attributes(span) == {
        "dpone.workload": "measurements_sync", "dpone.plan_digest": compiled.digest,
        "dpone.profile": compiled.plan.profile.snapshot.id,
        "dpone.environment": compiled.plan.environment.ref}
    assert span.status.status_code is StatusCode.UNSET
    assert parent_of(span) is None


def test_a_refused_compile_ends_its_span_with_the_code(spans: Recorded, registry: Path) -> None:
    workload = registry / "workloads" / "measurements_sync.yaml"
    text = workload.read_text(encoding="utf-8")
    workload.write_text(text.replace("connection_ref: mock_measurements",
                                     "connection_ref: no_such_binding"), encoding="utf-8")

    with pytest.raises(DponeError) as refused:
        compile_workload(workload, registry)

    span = spans.one("dpone.compile")
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == refused.value.code
    assert _attributes(span) == {tracing.ERROR_TYPE: refused.value.code}
    assert "no_such_binding" not in span.to_json()


def test_freeze_and_seal_are_stages_and_each_child_a_span_of_the_seal(
        spans: Recorded, tmp_path: Path) -> None:
    with tracing.span("test.run") as run:
        sealed = seal_example(EXAMPLES / "workloads" / "measurements_async.yaml", EXAMPLES,
                              tmp_path / "artifacts", AUGUST)

    topology, parent = sealed.topology, sealed.parent
    boundary = {"dpone.workload": "measurements_async", "dpone.plan_digest": sealed.plan_digest,
                "dpone.environment": "local-dev", "dpone.interval_start": "2026-08-01",
                "dpone.interval_end": "2026-09-01"}
    freeze, seal = spans.one("dpone.freeze"), spans.one("dpone.seal")
    assert _attributes(freeze) == {**boundary, "dpone.parent_digest": parent.artifact.digest,
                                   "dpone.rows": parent.row_count}
    assert _attributes(seal) == {**boundary, "dpone.parent_digest": parent.artifact.digest,
                                 "dpone.parent_plan_digest": topology.parent_plan_digest,
                                 "dpone.rows": topology.total_rows,
                                 "dpone.child_count": len(topology.children)}
    run_id = run.get_span_context().span_id
    assert parent_of(spans.one("dpone.compile")) == parent_of(freeze) == parent_of(seal) == run_id
    assert freeze.end_time is not None and seal.start_time is not None
    assert freeze.end_time <= seal.start_time

    children = spans.named("dpone.seal.child")
    assert len(topology.children) > 1
    assert sorted(_attributes(c)["dpone.child_ordinal"] for c in children) == [
        c.descriptor.ordinal for c in topology.children]
    for child in children:  # published from the sealer's threads, still under the seal stage
        assert parent_of(child) == seal.context.span_id
        assert child.context.trace_id == run.get_span_context().trace_id
        described = next(c.descriptor for c in topology.children
                         if c.descriptor.ordinal == _attributes(child)["dpone.child_ordinal"])
        assert _attributes(child) == {"dpone.plan_digest": sealed.plan_digest,
                                      "dpone.child_ordinal": described.ordinal,
                                      "dpone.rows": described.row_count,
                                      "dpone.wire_bytes": described.wire_bytes}


def _blocked(dpone: Dpone) -> tuple[str, str]:
    run = dpone.deliver("measurements_sync", FULL, "--format", "json")
    assert run.code == 4, run.out + run.err
    document = run.json()
    return str(document["parent_id"]), str(document["blocked"]["operation_id"])


def test_reconcile_is_one_span_naming_the_child_its_proof_and_effect(
        spans: Recorded, registry: Path, tmp_path: Path, receiver: ReceiverThread) -> None:
    dpone = Dpone(registry, tmp_path / "state")
    receiver.state.faults.install([DROP_SYNC])
    parent_id, child_id = _blocked(dpone)
    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps({
        "schema": "dpone.operator_evidence.v1", "effect": "not_applied", "accepted_rows": 0,
        "rejected_rows": 0, "receiver_reference": "console batch",
        "attested_by": "ops@example.test"}), encoding="utf-8")
    spans.clear()

    preview = reconcile(dpone, child_id, "--evidence", str(evidence), "--format", "json")
    refused = reconcile(dpone, parent_id, "--evidence", str(evidence), "--format", "json")

    assert preview.code == 0, preview.out + preview.err
    document = preview.json()
    assert refused.code == 2 and refused.json()["code"] == "input.invalid_argument"
    recorded, failed = spans.named("dpone.reconcile")
    assert _attributes(recorded) == {
        "dpone.operation_id": child_id, "dpone.parent_id": parent_id,
        "dpone.plan_digest": document["plan_digest"], "dpone.child_ordinal": document["ordinal"],
        "dpone.profile": "mock.batch-ndjson", "dpone.environment": "local-dev",
        "dpone.reconcile.proof": "operator_evidence", "dpone.reconcile.effect": "not_applied",
        "dpone.reconcile.applied": False}
    assert recorded.status.status_code is StatusCode.UNSET
    commands = spans.named("dpone.command")  # each CLI run is one trace under its command span
    assert [_attributes(command) for command in commands] == [{"dpone.command": "delivery reconcile"}] * 2
    assert parent_of(recorded) == commands[0].context.span_id
    assert failed.status.status_code is StatusCode.ERROR
    assert _attributes(failed) == {"dpone.operation_id": parent_id,
                                   tracing.ERROR_TYPE: "input.invalid_argument"}
