"""One trace per delivery task, across the processes that run it (OpenTelemetry API only: a
no-op until the deployment configures an SDK). Airflow-free.

``execute`` runs in a span ``dpone.airflow.execute``, a child of the current context (the
task's span when Airflow traces its tasks). When the task defers, the W3C ``traceparent`` of
that span travels in the trigger's kwargs and comes back in its event (Airflow hands the event
to the resumed method; ``dag.test()`` drops ``defer(kwargs=...)``): the trigger wraps each
observation step in ``dpone.airflow.trigger_observe`` and ``execute_complete`` runs in
``dpone.airflow.execute_complete``, both children of that ``traceparent`` (a resumed span is
linked to the current one, if any). The executor pod gets it as ``TRACEPARENT``.

Only the ``traceparent`` travels (never ``tracestate`` or baggage, which may hold anything), and
only in its W3C shape. Span attributes are identifiers, digests, states and stable error codes:
never a message, a URL, a header or a credential.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Final

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from dpone_airflow import __version__
from dpone_airflow._outcome import ERROR_CODE

TRACER: Final = trace.get_tracer("dpone_airflow", __version__)
ENVIRONMENT_VARIABLE: Final = "TRACEPARENT"
"""The executor pod's parent context (the dpone CLI's spans continue it)."""
TRACEPARENT: Final = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")
_W3C: Final = TraceContextTextMapPropagator()

ATTRIBUTES: Final = {
    "plan_digest": "dpone.plan_digest",
    "operation_id": "dpone.operation_id",
    "parent_id": "dpone.parent_id",
    "error_code": "dpone.error_code",
    "state_name": "dpone.state",
    "revision": "dpone.revision",
}
"""Keyword -> span attribute name."""


def attributes(**fields: str | int | None) -> dict[str, str | int]:
    """The span attributes of ``fields`` (keywords of :data:`ATTRIBUTES`; ``None`` dropped)."""
    return {ATTRIBUTES[name]: value for name, value in fields.items() if value is not None}


def current_traceparent() -> str | None:
    """The W3C ``traceparent`` of the current span; ``None`` outside a valid span context."""
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    value = carrier.get("traceparent")
    return value if value is not None and TRACEPARENT.fullmatch(value) else None


def _parent(traceparent: str | None) -> Context | None:
    if traceparent is None or not TRACEPARENT.fullmatch(traceparent):
        return None
    context = _W3C.extract({"traceparent": traceparent})
    return context if trace.get_current_span(context).get_span_context().is_valid else None


@contextlib.contextmanager
def span(name: str, *, traceparent: str | None = None, **fields: str | int | None,
         ) -> Iterator[Span]:
    """A span ``name`` around the block, current inside it: a child of ``traceparent`` when one
    is given (and linked to the current span, if valid), else of the current context. An
    ``Exception`` sets the error status with no message, and its ``code`` when it has one (a
    DponeError; the operators note their failure's code with :func:`note`); Airflow's deferral
    (a ``BaseException``) ends the span as it is."""
    parent = _parent(traceparent)
    links: list[Link] = []
    if parent is not None:
        here = trace.get_current_span().get_span_context()
        if here.is_valid:
            links.append(Link(here))
    with TRACER.start_as_current_span(name, context=parent, links=links,
                                      attributes=attributes(**fields), record_exception=False,
                                      set_status_on_exception=False) as current:
        try:
            yield current
        except Exception as error:
            current.set_status(Status(StatusCode.ERROR))
            code = getattr(error, "code", None)
            if isinstance(code, str) and ERROR_CODE.fullmatch(code):
                current.set_attributes(attributes(error_code=code))
            raise


def note(**fields: str | int | None) -> None:
    """Add ``fields`` to the current span (nothing outside a recording span)."""
    trace.get_current_span().set_attributes(attributes(**fields))
