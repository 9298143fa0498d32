"""Whether a process exports its spans, and how, read from the standard OpenTelemetry variables.

Pure: reads a mapping of environment variables and imports no part of OpenTelemetry, so a
process that exports nothing decides so without loading the SDK.

Spans are exported only when asked for: ``OTEL_TRACES_EXPORTER`` names ``otlp`` or ``console``,
or ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set (then
``otlp``). ``OTEL_SDK_DISABLED=true`` and ``OTEL_TRACES_EXPORTER=none`` turn it off whatever else
is set. OTLP is sent over HTTP/protobuf only (the exporter of the ``otel`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

EXPORTERS: Final = ("otlp", "console")
"""The span exporters a dpone process can install (``OTEL_TRACES_EXPORTER`` values)."""

DEFAULT_EXPORT_TIMEOUT_S: Final = 2.0
"""How long one export (its retries included), and the flush at process exit, may take unless
``OTEL_BSP_EXPORT_TIMEOUT`` says otherwise (OpenTelemetry's own defaults are 10 s per request and
30 s per export): a collector that is down or does not answer delays a run's exit by at most
this much, and a collector on the same network answers well within it."""

_OTLP_PROTOCOL: Final = "http/protobuf"
_ENDPOINTS: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_PROTOCOLS: Final = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
_TIMEOUTS: Final = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")


@dataclass(frozen=True, slots=True)
class SpanExport:
    """The span export a process's environment asks for."""

    exporters: tuple[str, ...]
    """Names of :data:`EXPORTERS`, in the order given (empty when all asked for is ignored)."""
    export_timeout_s: float
    """The bound of one export and of the flush at exit (``OTEL_BSP_EXPORT_TIMEOUT``, ms)."""
    otlp_timeout_s: float | None
    """The OTLP request timeout to pass to the exporter; ``None`` when
    ``OTEL_EXPORTER_OTLP[_TRACES]_TIMEOUT`` is set (the exporter reads it itself)."""
    ignored: tuple[str, ...] = ()
    """What was asked for but cannot be exported (an unknown exporter, OTLP over gRPC)."""


def _first(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def _export_timeout_s(environ: Mapping[str, str]) -> float:
    try:
        millis = float(environ.get("OTEL_BSP_EXPORT_TIMEOUT", ""))
    except ValueError:
        return DEFAULT_EXPORT_TIMEOUT_S
    return millis / 1000 if millis > 0 else DEFAULT_EXPORT_TIMEOUT_S


def requested(environ: Mapping[str, str]) -> SpanExport | None:
    """The span export ``environ`` asks for, or ``None`` when spans stay unexported."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    named = [name.strip().lower()
             for name in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if name.strip()]
    if "none" in named:
        return None
    if not named and _first(environ, _ENDPOINTS) is not None:
        named = ["otlp"]
    protocol = (_first(environ, _PROTOCOLS) or _OTLP_PROTOCOL).lower()
    exporters: list[str] = []
    ignored: list[str] = []
    for name in dict.fromkeys(named):
        if name == "otlp" and protocol != _OTLP_PROTOCOL:
            ignored.append(f"otlp over {protocol}")
        elif name in EXPORTERS:
            exporters.append(name)
        else:
            ignored.append(name)
    if not exporters and not ignored:
        return None
    timeout = _export_timeout_s(environ)
    return SpanExport(exporters=tuple(exporters), export_timeout_s=timeout,
                      otlp_timeout_s=None if _first(environ, _TIMEOUTS) else timeout,
                      ignored=tuple(ignored))
