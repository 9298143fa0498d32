"""A stage of dpone's work (compile, freeze, seal, admit, deliver, reconcile, resume): one span
``dpone.<stage>`` and one observation of ``dpone_stage_duration_seconds``."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from opentelemetry.trace import Span

from dpone.contracts.metrics import STAGES
from dpone.observability import metrics, tracing


@contextlib.contextmanager
def stage(name: str, **fields: str | int | None) -> Iterator[Span]:
    """Time the block as stage ``name`` (one of :data:`~dpone.contracts.metrics.STAGES`) in a
    span with the identifying ``fields`` (see :data:`tracing.ATTRIBUTES`)."""
    if name not in STAGES:
        raise ValueError(f"not a stage of the metrics catalogue: {name!r}")
    started = time.perf_counter()
    with tracing.span(f"dpone.{name}", **fields) as current:
        try:
            yield current
        finally:
            metrics.stage(name, time.perf_counter() - started)
