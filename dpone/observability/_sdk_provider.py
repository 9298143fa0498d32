"""The OpenTelemetry SDK's tracer provider of a dpone process (the ``otel`` extra).

Imported only when the environment asks for spans (:mod:`._export_settings`): without the SDK
installed the import fails and the process keeps the API's no-op provider. Every exporter sits
behind a :class:`BatchSpanProcessor`, so a span costs the run a queue append; exports happen on
the processor's thread, each bounded by the export timeout.
"""

from __future__ import annotations

import sys

from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, OTELResourceDetector, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

from dpone import __version__
from dpone.observability._export_settings import SpanExport

DEFAULT_SERVICE_NAME = "dpone"


def resource() -> Resource:
    """``service.name`` (``OTEL_SERVICE_NAME``, else ``service.name`` of
    ``OTEL_RESOURCE_ATTRIBUTES``, else ``dpone``) and ``service.version`` (dpone's), with what
    the SDK's detectors read from the environment."""
    named = OTELResourceDetector().detect().attributes.get(SERVICE_NAME)
    return Resource.create({SERVICE_NAME: str(named or DEFAULT_SERVICE_NAME),
                            SERVICE_VERSION: __version__})


def _exporter(name: str, export: SpanExport) -> SpanExporter:
    if name == "console":  # stderr: stdout holds the command's one document
        return ConsoleSpanExporter(out=sys.stderr)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
        OTLPSpanExporter,
    )

    # Endpoint, headers, compression, certificates (and the timeout, when given) come from the
    # OTEL_EXPORTER_OTLP_* variables, read by the exporter itself.
    return OTLPSpanExporter(timeout=export.otlp_timeout_s)


def tracer_provider(export: SpanExport) -> TracerProvider:
    """A provider exporting to each of ``export.exporters`` (sampler from ``OTEL_TRACES_SAMPLER``,
    by default parent-based always-on). It registers no exit handler of its own: the caller
    shuts it down, bounded by ``export.export_timeout_s``."""
    provider = TracerProvider(resource=resource(), shutdown_on_exit=False)
    for name in export.exporters:
        provider.add_span_processor(BatchSpanProcessor(
            _exporter(name, export), export_timeout_millis=export.export_timeout_s * 1000))
    return provider
