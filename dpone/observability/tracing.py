"""OpenTelemetry spans of dpone's stages and child steps (the API only: a no-op until an SDK is
configured).

Span attributes are the ``dpone.*`` names below: identifiers (operation, parent, plan digest,
child ordinal) belong here and in logs, never in metric labels.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Final

from opentelemetry import trace

TRACER: Final = trace.get_tracer("dpone")

ATTRIBUTES: Final = {
    "operation_id": "dpone.operation_id",
    "parent_id": "dpone.parent_id",
    "plan_digest": "dpone.plan_digest",
    "ordinal": "dpone.child_ordinal",
    "profile": "dpone.profile",
    "environment": "dpone.environment",
    "transition": "dpone.transition",
}
"""Keyword of :func:`span` -> span attribute name."""


def attributes(fields: Mapping[str, str | int | None]) -> dict[str, str | int]:
    """The span attributes of ``fields`` (keywords of :data:`ATTRIBUTES`; ``None`` dropped)."""
    return {ATTRIBUTES[name]: value for name, value in fields.items() if value is not None}


@contextlib.contextmanager
def span(name: str, **fields: str | int | None) -> Iterator[trace.Span]:
    """A span ``name`` (``dpone.<stage>`` or ``dpone.child.<step>``) around the block, a child
    of the current one; an exception ends it with an error status."""
    with TRACER.start_as_current_span(name, attributes=attributes(fields)) as current:
        yield current


def current_ids() -> tuple[str, str] | None:
    """The current trace and span ids as hex (for a log event), or ``None`` outside a
    recording span."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")
