"""OpenTelemetry spans of dpone's stages and child steps, and the process's span export.

Code opens spans through the OpenTelemetry API only (:func:`span`, and the stage timer of
:mod:`dpone.observability.stages`): a no-op until a provider is installed. The CLI entry points
call :func:`configure` once at start, which installs the SDK's provider when it is installed
(the ``otel`` extra) and the standard ``OTEL_*`` variables ask for spans
(:mod:`._export_settings`), continues the trace of ``TRACEPARENT``, and flushes at exit.

Span attributes are the ``dpone.*`` names below: identifiers (operation, parent, plan digest,
child ordinal) belong here and in logs, never in metric labels; never a secret, a URL, a header
or a body. A failed span carries the error's catalog code (or exception type) as its status and
``error.type``, never its message.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Final

from opentelemetry import context, trace
from opentelemetry.trace import ProxyTracerProvider, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from dpone.observability._export_settings import SpanExport, requested

TRACER: Final = trace.get_tracer("dpone")
LOG: Final = logging.getLogger("dpone.tracing")

ATTRIBUTES: Final = {
    "operation_id": "dpone.operation_id",
    "parent_id": "dpone.parent_id",
    "plan_digest": "dpone.plan_digest",
    "ordinal": "dpone.child_ordinal",
    "profile": "dpone.profile",
    "environment": "dpone.environment",
    "transition": "dpone.transition",
    "workload": "dpone.workload",
    "interval_start": "dpone.interval_start",
    "interval_end": "dpone.interval_end",
    "parent_digest": "dpone.parent_digest",
    "parent_plan_digest": "dpone.parent_plan_digest",
    "rows": "dpone.rows",
    "children": "dpone.child_count",
    "wire_bytes": "dpone.wire_bytes",
    "proof": "dpone.reconcile.proof",
    "effect": "dpone.reconcile.effect",
    "applied": "dpone.reconcile.applied",
    "command": "dpone.command",
}
"""Keyword of :func:`span` -> span attribute name."""

ERROR_TYPE: Final = "error.type"
"""The attribute of a failed span: the error's catalog code, else its exception type."""

CARRIER: Final = {"traceparent": "TRACEPARENT", "tracestate": "TRACESTATE"}
"""W3C trace context header -> the environment variable that hands it to a process."""


def attributes(fields: Mapping[str, str | int | None]) -> dict[str, str | int]:
    """The span attributes of ``fields`` (keywords of :data:`ATTRIBUTES`; ``None`` dropped)."""
    return {ATTRIBUTES[name]: value for name, value in fields.items() if value is not None}


def _failed(current: trace.Span, error: BaseException) -> None:
    code = getattr(error, "code", None)
    kind = code if isinstance(code, str) else type(error).__qualname__
    current.set_attribute(ERROR_TYPE, kind)
    current.set_status(Status(StatusCode.ERROR, kind))


@contextlib.contextmanager
def span(name: str, **fields: str | int | None) -> Iterator[trace.Span]:
    """A span ``name`` (``dpone.<stage>``, ``dpone.seal.child`` or ``dpone.child.<step>``)
    around the block, a child of the current one; an exception ends it with an error status."""
    with TRACER.start_as_current_span(name, attributes=attributes(fields),
                                      record_exception=False,
                                      set_status_on_exception=False) as current:
        try:
            yield current
        except (SystemExit, GeneratorExit):
            raise
        except BaseException as error:
            _failed(current, error)
            raise


def annotate(**fields: str | int | None) -> None:
    """Add ``fields`` (keywords of :data:`ATTRIBUTES`) to the current span, once known."""
    trace.get_current_span().set_attributes(attributes(fields))


def current_ids() -> tuple[str, str] | None:
    """The current trace and span ids as hex (for a log event), or ``None`` outside a span
    (with an exporting provider, the trace parent handed over by ``TRACEPARENT`` is one)."""
    span_context = trace.get_current_span().get_span_context()
    if not span_context.is_valid:
        return None
    return format(span_context.trace_id, "032x"), format(span_context.span_id, "016x")


# --- the process's span export ---------------------------------------------------------------

class _Export:
    """The provider this process installed: how to stop it and how long to wait for that."""

    stop: Callable[[], object] | None = None
    timeout_s: float = 0.0


_EXPORT: Final = _Export()


def _installed(export: SpanExport) -> bool:
    try:
        from dpone.observability import _sdk_provider  # noqa: PLC0415 - only when asked for
    except ImportError:  # no `otel` extra: the API stays a no-op, quietly
        return False
    try:
        provider = _sdk_provider.tracer_provider(export)
    except Exception as error:  # a bad OTEL_* value must not stop the command
        LOG.warning("warning: spans are not exported: %s", error)
        return False
    trace.set_tracer_provider(provider)
    _EXPORT.stop, _EXPORT.timeout_s = provider.shutdown, export.export_timeout_s
    return True


def _continue_trace(environ: Mapping[str, str]) -> None:
    """Make the trace parent of ``TRACEPARENT`` (and ``TRACESTATE``) current for the rest of
    the process: its spans join the trace of whoever started it (the Airflow task)."""
    carrier = {header: environ[name] for header, name in CARRIER.items() if environ.get(name)}
    if "traceparent" not in carrier:
        return
    parent = TraceContextTextMapPropagator().extract(carrier)
    if trace.get_current_span(parent).get_span_context().is_valid:
        context.attach(parent)  # never detached: it is the process's context


def configure() -> bool:
    """Install the process's span export when its environment asks for it and the SDK is
    installed; True when spans are now exported.

    Without the SDK, without a request in the standard variables, or with
    ``OTEL_SDK_DISABLED=true`` / ``OTEL_TRACES_EXPORTER=none``, nothing is installed and
    nothing is printed. Idempotent, and a provider installed by someone else (a process that
    embeds dpone) is left alone. Spans are flushed at exit by :func:`shutdown`, registered with
    :mod:`atexit`; the CLI also calls it on every exit path of its ``main``.
    """
    if _EXPORT.stop is not None:
        return True
    export = requested(os.environ)
    if export is None or not isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        return False
    if export.ignored:
        LOG.warning("warning: OTEL_TRACES_EXPORTER / OTEL_EXPORTER_OTLP_PROTOCOL ask for %s; "
                    "dpone exports spans over otlp (http/protobuf) or to the console only",
                    ", ".join(export.ignored))
    if not export.exporters or not _installed(export):
        return False
    _continue_trace(os.environ)
    atexit.register(shutdown)
    return True


def shutdown() -> None:
    """Flush the spans still queued and stop the export, waiting at most the export timeout
    (a collector that does not answer costs the exit no more); a no-op when nothing is
    installed or it already stopped."""
    stop, _EXPORT.stop = _EXPORT.stop, None
    if stop is None:
        return
    flushing = threading.Thread(target=stop, name="dpone-span-flush", daemon=True)
    flushing.start()
    flushing.join(_EXPORT.timeout_s)
