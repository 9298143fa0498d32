"""A local OTLP/HTTP trace endpoint: accepts ``POST /v1/traces`` (protobuf, plain, gzip or
deflate), decodes each ``ExportTraceServiceRequest`` with ``opentelemetry.proto`` and records
its spans, flattened with their resource. What a collector would see, on loopback only."""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Status

TRACES_PATH = "/v1/traces"


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as the endpoint decoded it (ids as lower-case hex, ``parent_span_id`` empty for
    a root span)."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: str
    status: str
    """``UNSET``, ``OK`` or ``ERROR``."""
    status_message: str
    events: tuple[str, ...]


@dataclass
class Received:
    """What the endpoint recorded: spans and each request's ``Content-Encoding``."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    encodings: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def named(self, name: str) -> list[ReceivedSpan]:
        with self.lock:
            return [s for s in self.spans if s.name == name]


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return _pairs(value.kvlist_value.values)
    return getattr(value, kind) if kind else None


def _pairs(pairs: Iterable[KeyValue]) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def decode(body: bytes) -> list[ReceivedSpan]:
    """The spans of one ``ExportTraceServiceRequest``."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = _pairs(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(ReceivedSpan(
                    name=span.name, trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                    parent_span_id=span.parent_span_id.hex(),
                    attributes=_pairs(span.attributes), resource=resource,
                    scope=scope_spans.scope.name,
                    status=Status.StatusCode.Name(span.status.code).removeprefix("STATUS_CODE_"),
                    status_message=span.status.message,
                    events=tuple(event.name for event in span.events)))
    return spans


def _inflated(body: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "deflate":
        return zlib.decompress(body)
    return body


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != TRACES_PATH:
            self.send_error(404)
            return
        encoding = self.headers.get("Content-Encoding", "").lower()
        spans = decode(_inflated(body, encoding))
        with self.server.received.lock:
            self.server.received.spans.extend(spans)
            self.server.received.encodings.append(encoding or "identity")
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: nothing on stderr per request."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    received: Received


class OtlpEndpoint:
    """``with OtlpEndpoint() as endpoint:`` a trace endpoint on 127.0.0.1 (``endpoint.url`` is
    the base URL for ``OTEL_EXPORTER_OTLP_ENDPOINT``); ``endpoint.received`` holds its spans."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.received = Received()
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="otlp-endpoint", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def received(self) -> Received:
        return self._server.received

    def __enter__(self) -> OtlpEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
