"""dpone's spans recorded in memory for one test, without touching the process's global tracer
provider (which can be set only once per process and is shared by every test of an xdist
worker): :data:`dpone.observability.tracing.TRACER` is swapped for a tracer of a private SDK
provider whose spans go to an ``InMemorySpanExporter``, and put back after the test."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dpone.observability import tracing


@dataclass(frozen=True)
class Recorded:
    """The spans ended so far, in the order they ended."""

    exporter: InMemorySpanExporter

    def all(self) -> tuple[ReadableSpan, ...]:
        return tuple(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.all() if span.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans {name!r} among {[s.name for s in self.all()]}"
        return found[0]

    def clear(self) -> None:
        self.exporter.clear()


def parent_of(span: ReadableSpan) -> int | None:
    """The span id of ``span``'s parent, or None for a root span."""
    return span.parent.span_id if span.parent is not None else None


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorded]:
    """Every span dpone opens during the test, recorded in memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "dpone-test"}),
                              shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "TRACER", provider.get_tracer("dpone"))
    yield Recorded(exporter)
    provider.shutdown()
