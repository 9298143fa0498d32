"""What a delivery run tells its operators, on both journals: the process's metrics (requests by
phase, outcome and status class; rows and bytes sent; transitions; retries; the run's result)
with bounded labels only, and one JSON log event per transition and per attempt carrying the
identifiers the metrics never do, inside a span per child step."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted
from dpone.observability import logs
from support.delivery import TOKEN, HarnessFactory
from support.spans import Recorded, parent_of
from support.telemetry import delta, label_values, samples, unbounded


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    logs.configure("json", stream=stream)
    try:
        yield stream
    finally:
        logs.configure("off")


def _events(stream: io.StringIO) -> list[dict[str, object]]:
    """The run's events (the in-process mock receiver logs under ``dpone.receiver``)."""
    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [event for event in events if event["logger"] == "dpone.delivery"]


@pytest.mark.parametrize("family", ["sync", "async"])
def test_a_run_counts_its_requests_rows_bytes_and_transitions(
        harness: HarnessFactory, family: str, json_logs: io.StringIO) -> None:
    h = harness(family)
    profile = h.plan.profile.snapshot.id
    before = samples()
    result = h.run()
    after = samples()
    assert isinstance(result, DeliveryCompleted), result
    children = [h.child(n) for n in range(1, len(h.topology.children) + 1)]

    submits = delta(before, after, "dpone_requests_total", profile=profile, phase="submit",
                    outcome="response", status_class="2xx")
    assert submits == len(children) == h.count("POST")
    assert delta(before, after, "dpone_request_duration_seconds_count", profile=profile,
                 phase="submit") == len(children)
    assert delta(before, after, "dpone_rows_sent_total", profile=profile) == sum(
        child.row_count for child in children)
    assert delta(before, after, "dpone_bytes_sent_total", profile=profile) == sum(
        child.wire_bytes or 0 for child in children)
    polls = delta(before, after, "dpone_requests_total", profile=profile, phase="poll_receipt")
    assert polls == (h.count("GET") if family == "async" else 0)
    assert delta(before, after, "dpone_transitions_total", profile=profile,
                 transition="enter_submitting") == len(children)
    assert delta(before, after, "dpone_transitions_total", profile=profile) == len(h.steps)
    assert delta(before, after, "dpone_deliveries_total", profile=profile,
                 result="completed") == 1
    assert delta(before, after, "dpone_stage_duration_seconds_count", stage="admit") == 1

    identifiers = [h.parent().parent_id, h.parent().plan_digest,
                   *(child.operation_id for child in children)]
    assert unbounded(after, identifiers) == []

    events = _events(json_logs)
    transitions = [e for e in events if e["event"] == "transition"]
    attempts = [e for e in events if e["event"] == "attempt"]
    assert len(transitions) + len(attempts) == len(h.steps)
    assert len(attempts) == len(children)
    for event in events:
        assert event["logger"] == "dpone.delivery"
        assert event["plan_digest"] == h.parent().plan_digest
        assert event["parent_id"] == h.parent().parent_id
        assert event["operation_id"] in {child.operation_id for child in children}
        assert isinstance(event["ordinal"], int)
        assert event["profile"] == profile
    assert [(e["ordinal"], e["transition"]) for e in events] == list(h.steps)
    assert TOKEN not in json_logs.getvalue()


def test_a_throttled_submit_counts_a_retry_and_its_status_class(harness: HarnessFactory) -> None:
    h = harness("async")  # certified fence: a small Retry-After is honoured, then replayed
    profile = h.plan.profile.snapshot.id
    h.fail_submit("status", status=429, retry_after=1)
    before = samples()
    result = h.run()
    after = samples()
    assert isinstance(result, DeliveryCompleted), result
    assert delta(before, after, "dpone_retries_total", profile=profile, action="replay",
                 status_class="4xx") == 1
    assert delta(before, after, "dpone_requests_total", profile=profile, phase="submit",
                 status_class="4xx") == 1
    assert delta(before, after, "dpone_requests_total", profile=profile, phase="replay",
                 status_class="2xx") == 1


def test_an_unknown_effect_counts_a_blocked_run_and_a_transport_failure(
        harness: HarnessFactory) -> None:
    h = harness("sync")
    profile = h.plan.profile.snapshot.id
    h.fail_submit("commit_then_drop")
    before = samples()
    result = h.run()
    after = samples()
    assert isinstance(result, DeliveryBlocked), result
    assert delta(before, after, "dpone_deliveries_total", profile=profile, result="blocked") == 1
    failed = delta(before, after, "dpone_requests_total", profile=profile, phase="submit",
                   status_class="none")
    assert failed == 1
    outcomes = label_values({key: value for key, value in after.items()
                             if key[0] == "dpone_requests_total"}, "outcome")
    assert outcomes - {"response"}, "the dropped connection is counted by its failure kind"
    assert unbounded(after, [result.operation_id, result.parent_id]) == []


def test_a_run_traces_its_admission_and_every_child_step_with_the_identifiers(
        harness: HarnessFactory, spans: Recorded, json_logs: io.StringIO,
        tmp_path: Path) -> None:
    h = harness("async")
    result = h.run()
    assert isinstance(result, DeliveryCompleted), result
    parent = h.parent()
    deliver = spans.one("dpone.deliver")
    admit = spans.one("dpone.admit")
    assert parent_of(admit) == deliver.context.span_id
    assert deliver.attributes is not None
    assert deliver.attributes["dpone.parent_id"] == parent.parent_id
    assert deliver.attributes["dpone.plan_digest"] == parent.plan_digest
    steps = [span for span in spans.all() if span.name.startswith("dpone.child.")]
    assert {span.name for span in steps} >= {"dpone.child.submit", "dpone.child.observe",
                                             "dpone.child.promote"}
    for span in steps:
        assert parent_of(span) == deliver.context.span_id
        assert span.context.trace_id == deliver.context.trace_id
        assert span.attributes is not None
        assert span.attributes["dpone.parent_id"] == parent.parent_id
        if span.name != "dpone.child.promote":
            assert span.attributes["dpone.plan_digest"] == parent.plan_digest
            ordinal = span.attributes["dpone.child_ordinal"]
            assert span.attributes["dpone.operation_id"] == h.child(int(ordinal)).operation_id
    submits = spans.named("dpone.child.submit")
    assert len(submits) == len(h.topology.children)
    # Each log event names the span it was told in.
    trace_id = format(deliver.context.trace_id, "032x")
    ids = {format(span.context.span_id, "016x") for span in steps}
    events = _events(json_logs)
    assert events and all(e["trace_id"] == trace_id and e["span_id"] in ids for e in events)
    # No span carries a secret: every span, serialized, is also left for the run's search.
    exported = "\n".join(span.to_json() for span in spans.all())
    (tmp_path / "spans.json").write_text(exported, "utf-8")
    assert TOKEN not in exported
