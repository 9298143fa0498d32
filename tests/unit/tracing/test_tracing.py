"""dpone's spans through the OpenTelemetry API: ``dpone.*`` attributes only, a failure recorded as
its catalog code (never its message), the process's provider built from the environment (service
name and version), and the trace handed over by ``TRACEPARENT`` continued."""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

import dpone
from dpone.contracts import DponeError
from dpone.observability import _sdk_provider, tracing
from dpone.observability._export_settings import SpanExport
from dpone.observability.stages import stage
from support.spans import Recorded, parent_of

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
SECRET_LOOKING = "tok-tracing-sentinel-never-in-a-span"


def test_a_span_carries_only_dpone_attributes_and_drops_what_is_unknown(spans: Recorded) -> None:
    with tracing.span("dpone.compile", plan_digest="sha256:" + "a" * 64, ordinal=None) as outer:
        tracing.annotate(workload="measurements_sync", rows=630, applied=False)
        ids = tracing.current_ids()
        with tracing.span("dpone.seal.child", ordinal=2):
            pass

    assert ids == (format(outer.get_span_context().trace_id, "032x"),
                   format(outer.get_span_context().span_id, "016x"))
    compiled = spans.one("dpone.compile")
    assert dict(compiled.attributes or {}) == {
        "dpone.plan_digest": "sha256:" + "a" * 64, "dpone.workload": "measurements_sync",
        "dpone.rows": 630, "dpone.reconcile.applied": False}
    child = spans.one("dpone.seal.child")
    assert parent_of(child) == compiled.context.span_id
    assert dict(child.attributes or {}) == {"dpone.child_ordinal": 2}
    assert tracing.current_ids() is None
    assert all(name.startswith("dpone.") for name in tracing.ATTRIBUTES.values())
    assert len(set(tracing.ATTRIBUTES.values())) == len(tracing.ATTRIBUTES)


def test_a_failure_is_its_catalog_code_never_its_message(spans: Recorded) -> None:
    with pytest.raises(DponeError), tracing.span("dpone.reconcile"):
        raise DponeError(code="reconcile.not_reconcilable", message=f"child 1 {SECRET_LOOKING}")
    with pytest.raises(ValueError, match="sentinel"), stage("compile"):
        raise ValueError(SECRET_LOOKING)

    for finished, kind in zip(spans.all(), ("reconcile.not_reconcilable", "ValueError"),
                              strict=True):
        assert finished.status.status_code is StatusCode.ERROR
        assert finished.status.description == kind
        assert dict(finished.attributes or {})[tracing.ERROR_TYPE] == kind
        assert finished.events == ()  # no exception event: it would carry the message
        assert SECRET_LOOKING not in finished.to_json()


def test_an_exit_or_a_closed_generator_is_no_failure(spans: Recorded) -> None:
    with pytest.raises(SystemExit), tracing.span("dpone.deliver"):
        raise SystemExit(0)
    assert spans.one("dpone.deliver").status.status_code is StatusCode.UNSET


def test_a_stage_outside_the_catalogue_is_refused() -> None:
    with pytest.raises(ValueError, match="not a stage"), stage("prepare"):
        pass


def test_the_resource_names_the_service_and_dpone_s_version(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"):
        monkeypatch.delenv(name, raising=False)
    plain = _sdk_provider.resource().attributes
    assert plain["service.name"] == "dpone" and plain["service.version"] == dpone.__version__

    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes,team=data")
    from_attributes = _sdk_provider.resource().attributes
    assert from_attributes["service.name"] == "from-attributes"
    assert from_attributes["team"] == "data"

    monkeypatch.setenv("OTEL_SERVICE_NAME", "dpone-executor-prod")
    named = _sdk_provider.resource().attributes
    assert named["service.name"] == "dpone-executor-prod"
    assert named["service.version"] == dpone.__version__


def test_the_provider_records_and_stops_within_its_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")  # nothing listens
    export = SpanExport(exporters=("otlp",), export_timeout_s=0.5, otlp_timeout_s=0.5)
    provider = _sdk_provider.tracer_provider(export)
    assert provider.resource.attributes["service.name"] == "dpone"
    with provider.get_tracer("probe").start_as_current_span("probe") as probe:
        assert probe.is_recording()
    started = time.monotonic()
    provider.shutdown()  # the one queued span is exported to nowhere, within the bound
    assert time.monotonic() - started < 3


class _Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def said() -> Iterator[list[logging.LogRecord]]:
    """What :mod:`dpone.observability.tracing` logs during the test (on its own logger: the CLI's
    log configuration may stop ``dpone`` records from reaching the root logger)."""
    handler, level = _Said(), tracing.LOG.level
    tracing.LOG.addHandler(handler)
    tracing.LOG.setLevel(logging.DEBUG)
    try:
        yield handler.records
    finally:
        tracing.LOG.removeHandler(handler)
        tracing.LOG.setLevel(level)


def _continued(environ: dict[str, str]) -> trace.SpanContext:
    """The current span context after :func:`tracing._continue_trace`, in a context of its own
    (the test's context is left as it was)."""
    def run() -> trace.SpanContext:
        tracing._continue_trace(environ)
        return trace.get_current_span().get_span_context()
    return contextvars.copy_context().run(run)


def test_traceparent_makes_the_handed_over_trace_current() -> None:
    parent = _continued({"TRACEPARENT": f"00-{TRACE_ID}-{PARENT_ID}-01",
                         "TRACESTATE": "airflow=task-1"})
    assert parent.is_valid and parent.is_remote
    assert (format(parent.trace_id, "032x"), format(parent.span_id, "016x")) == (TRACE_ID,
                                                                                 PARENT_ID)
    assert parent.trace_state.get("airflow") == "task-1"
    assert not trace.get_current_span().get_span_context().is_valid


@pytest.mark.parametrize("value", ["", "garbage", f"00-{'0' * 32}-{PARENT_ID}-01",
                                   f"00-{TRACE_ID}-{'0' * 16}-01"])
def test_a_missing_or_invalid_traceparent_starts_no_trace(value: str) -> None:
    assert not _continued({"TRACEPARENT": value}).is_valid


def _only(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> object:
    """The OTel variables of ``environ`` and none other; the provider before configuring."""
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                 "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_PROTOCOL",
                 "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return trace.get_tracer_provider()


@pytest.mark.parametrize("environ", [
    {},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"},
], ids=["nothing", "disabled", "none"])
def test_configure_installs_nothing_unless_asked_and_says_nothing(
        environ: dict[str, str], monkeypatch: pytest.MonkeyPatch,
        said: list[logging.LogRecord]) -> None:
    before = _only(environ, monkeypatch)

    assert tracing.configure() is False

    assert trace.get_tracer_provider() is before
    assert said == []
    tracing.shutdown()  # nothing installed: a no-op


@pytest.mark.parametrize(("environ", "named"), [
    ({"OTEL_TRACES_EXPORTER": "zipkin"}, "zipkin"),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317",
      "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "otlp over grpc"),
], ids=["unknown-exporter", "grpc"])
def test_an_export_dpone_cannot_make_is_one_warning_and_no_provider(
        environ: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch,
        said: list[logging.LogRecord]) -> None:
    before = _only(environ, monkeypatch)

    assert tracing.configure() is False

    assert trace.get_tracer_provider() is before
    assert [record.levelno for record in said] == [logging.WARNING]
    assert named in said[0].getMessage()
