"""When a dpone process exports spans, read from the standard OpenTelemetry variables alone: only
when asked for (an exporter named, or an OTLP endpoint given), never when the SDK is disabled or
the exporter is ``none``, OTLP over HTTP/protobuf only, every export bounded in time."""

from __future__ import annotations

import pytest

from dpone.observability._export_settings import DEFAULT_EXPORT_TIMEOUT_S, SpanExport, requested

ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}


@pytest.mark.parametrize("environ", [
    {},
    {"OTEL_SERVICE_NAME": "dpone-ci", "TRACEPARENT": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"},
    {"OTEL_EXPORTER_OTLP_ENDPOINT": " "},
    {**ENDPOINT, "OTEL_SDK_DISABLED": "true"},
    {**ENDPOINT, "OTEL_SDK_DISABLED": " TRUE "},
    {**ENDPOINT, "OTEL_TRACES_EXPORTER": "none"},
    {"OTEL_TRACES_EXPORTER": "otlp,none", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c/v1/traces"},
], ids=["nothing", "no-exporter-asked", "blank-endpoint", "sdk-disabled", "sdk-disabled-case",
        "exporter-none", "none-among-others"])
def test_nothing_is_exported_unless_asked_for(environ: dict[str, str]) -> None:
    assert requested(environ) is None


@pytest.mark.parametrize(("environ", "exporters"), [
    (ENDPOINT, ("otlp",)),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, ("otlp",)),
    ({"OTEL_TRACES_EXPORTER": "otlp"}, ("otlp",)),
    ({"OTEL_TRACES_EXPORTER": "console"}, ("console",)),
    ({"OTEL_TRACES_EXPORTER": " Console , otlp,console"}, ("console", "otlp")),
    ({**ENDPOINT, "OTEL_TRACES_EXPORTER": "console"}, ("console",)),
    ({**ENDPOINT, "OTEL_SDK_DISABLED": "false"}, ("otlp",)),
], ids=["endpoint", "traces-endpoint", "otlp", "console", "both-once-each", "named-wins",
        "sdk-enabled"])
def test_an_exporter_named_or_an_endpoint_given_asks_for_spans(
        environ: dict[str, str], exporters: tuple[str, ...]) -> None:
    export = requested(environ)
    assert export == SpanExport(exporters=exporters, export_timeout_s=DEFAULT_EXPORT_TIMEOUT_S,
                                otlp_timeout_s=DEFAULT_EXPORT_TIMEOUT_S)


def test_what_dpone_cannot_export_is_named_not_guessed() -> None:
    export = requested({"OTEL_TRACES_EXPORTER": "zipkin,otlp"})
    assert export is not None and export.exporters == ("otlp",) and export.ignored == ("zipkin",)
    grpc = requested({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert grpc is not None and grpc.exporters == () and grpc.ignored == ("otlp over grpc",)
    traces_http = requested({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                             "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"})
    assert traces_http is not None and traces_http.exporters == ("otlp",)


def test_every_export_is_bounded_by_the_batch_export_timeout() -> None:
    export = requested({**ENDPOINT, "OTEL_BSP_EXPORT_TIMEOUT": "750"})
    assert export is not None
    assert export.export_timeout_s == export.otlp_timeout_s == 0.75
    for broken in ("", "soon", "0", "-5"):
        export = requested({**ENDPOINT, "OTEL_BSP_EXPORT_TIMEOUT": broken})
        assert export is not None and export.export_timeout_s == DEFAULT_EXPORT_TIMEOUT_S
    assert DEFAULT_EXPORT_TIMEOUT_S <= 5


def test_an_otlp_timeout_of_its_own_is_left_to_the_exporter() -> None:
    for name in ("OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"):
        export = requested({**ENDPOINT, name: "3"})
        assert export is not None and export.otlp_timeout_s is None
        assert export.export_timeout_s == DEFAULT_EXPORT_TIMEOUT_S
