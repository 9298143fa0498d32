"""One trace per delivery task across its processes, with the OpenTelemetry SDK's in-memory
exporter as the tracer provider: ``execute`` opens ``dpone.airflow.execute`` in the current
context, the deferral carries its W3C ``traceparent`` to the trigger (whose observation steps
are its children) and to ``execute_complete``; a trigger serialized without it still runs."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import (
    ENVIRONMENT,
    FIRST_DAY,
    TOKEN,
    Published,
    dag_file,
    span_text,
    traceparent_of,
)
from dpone_airflow import _runtime
from dpone_airflow.operators import DponeDeliveryOperator
from dpone_airflow.triggers import DeliveryReceiptTrigger
from opentelemetry import trace

try:
    from airflow.sdk.exceptions import TaskDeferred
except ImportError:  # Airflow 2
    from airflow.exceptions import TaskDeferred

_CONTEXT = {"data_interval_start": FIRST_DAY, "data_interval_end": FIRST_DAY + dt.timedelta(days=1)}


@pytest.fixture
def serialized(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The kwargs of every receipt trigger serialized (what Airflow stores and the triggerer
    rebuilds the trigger from)."""
    seen: list[dict[str, Any]] = []
    real = DeliveryReceiptTrigger.serialize

    def spy(self: DeliveryReceiptTrigger) -> tuple[str, dict[str, Any]]:
        classpath, kwargs = real(self)
        seen.append(kwargs)
        return classpath, kwargs

    monkeypatch.setattr(DeliveryReceiptTrigger, "serialize", spy)
    return seen


@pytest.mark.smoke
def test_the_trigger_and_the_resumed_task_continue_the_tasks_trace(
        published: Published, run_dag: Callable[[Any, int], Any], spans: Any,
        span_exporter: Any, serialized: list[dict[str, Any]],
        observations: list[_runtime.Observed]) -> None:
    digest = published.digests["measurements_async"]
    dag = dag_file("dpone_traced", 1, digest, published.environments_dir)
    dag_run = run_dag(dag, 1)
    assert dag_run.state == "success"
    (ti,) = dag_run.get_task_instances()
    parent_id = ti.xcom_pull(task_ids="deliver")["parent_id"]

    (execute,) = spans("dpone.airflow.execute")
    observed = spans("dpone.airflow.trigger_observe")
    (complete,) = spans("dpone.airflow.execute_complete")
    assert execute.attributes["dpone.plan_digest"] == digest
    assert execute.attributes["dpone.operation_id"] == parent_id
    # Airflow 3 rebuilds the trigger from its serialized kwargs (Airflow 2's dag.test() runs the
    # deferred trigger object itself): they carry the traceparent of the execute span.
    assert all(kwargs["traceparent"] == traceparent_of(execute) for kwargs in serialized)
    assert len(observed) == len(observations) >= 1
    for span in (*observed, complete):
        assert span.context.trace_id == execute.context.trace_id
        assert span.parent is not None and span.parent.span_id == execute.context.span_id
    child = observations[-1].operation_id
    assert {s.attributes["dpone.operation_id"] for s in observed} == {child}
    assert {s.attributes["dpone.parent_id"] for s in observed} == {parent_id}
    assert observed[-1].attributes["dpone.state"] == observations[-1].state_name
    assert complete.attributes["dpone.operation_id"] == parent_id
    assert complete.status.is_ok
    # Neither a span attribute nor a trigger kwarg carries the credential.
    assert TOKEN not in span_text(span_exporter)
    assert TOKEN not in json.dumps(serialized)


def test_execute_is_a_child_of_the_current_span_and_hands_its_context_on(
        published: Published, spans: Any) -> None:
    """Where Airflow traces its tasks, ``execute`` runs in the task's span: its span is that
    span's child, and the deferral carries the execute span's context (never the task's)."""
    operator = DponeDeliveryOperator(task_id="deliver",
                                     plan_digest=published.digests["measurements_async"],
                                     environment=ENVIRONMENT,
                                     environments_dir=published.environments_dir)
    with trace.get_tracer("airflow.test").start_as_current_span("worker.deliver") as task_span, \
            pytest.raises(TaskDeferred) as deferred:
        operator.execute(_CONTEXT)
    (execute,) = spans("dpone.airflow.execute")
    assert execute.parent is not None
    assert execute.parent.span_id == task_span.get_span_context().span_id
    assert execute.context.trace_id == task_span.get_span_context().trace_id
    assert execute.status.is_unset  # a deferral is not an error
    trigger = deferred.value.trigger
    assert isinstance(trigger, DeliveryReceiptTrigger)
    assert trigger.traceparent == traceparent_of(execute)
    classpath, kwargs = trigger.serialize()
    assert kwargs["traceparent"] == traceparent_of(execute)
    assert TOKEN not in json.dumps([classpath, kwargs])
    assert trigger.serialize() == (classpath, kwargs)  # pure data: the same every time


def test_a_trigger_and_a_task_deferred_by_an_older_provider_still_run(
        published: Published, spans: Any) -> None:
    """Kwargs serialized before the trace context travelled: the trigger loads and observes (its
    steps start their own trace), and the task resumed by its event completes."""
    operator = DponeDeliveryOperator(task_id="deliver",
                                     plan_digest=published.digests["measurements_async"],
                                     environment=ENVIRONMENT,
                                     environments_dir=published.environments_dir)
    with pytest.raises(TaskDeferred) as deferred:
        operator.execute(_CONTEXT)
    _, kwargs = deferred.value.trigger.serialize()
    older = {name: value for name, value in kwargs.items() if name != "traceparent"}
    trigger = DeliveryReceiptTrigger(**older)
    assert trigger.traceparent is None and trigger.serialize()[1] == {**older,
                                                                      "traceparent": None}

    async def events() -> list[Any]:
        return [event async for event in trigger.run()]

    (event,) = asyncio.run(events())
    assert event.payload["traceparent"] is None
    result = operator.execute_complete(_CONTEXT, event.payload)
    assert result["kind"] == "completed"
    observed = spans("dpone.airflow.trigger_observe")
    assert observed and all(span.parent is None for span in observed)
    (complete,) = spans("dpone.airflow.execute_complete")
    assert complete.parent is None


def test_a_malformed_traceparent_is_dropped() -> None:
    """Only the W3C shape travels: anything else in the kwarg is not a trace context."""
    locator: dict[str, str | int | None] = {"environment": ENVIRONMENT}
    for value in ("00-xyz", f"00-{'0' * 32}-{'1' * 16}-01 {TOKEN}", TOKEN):
        trigger = DeliveryReceiptTrigger("op_v1_" + "a" * 64 + "_0001", locator,
                                         traceparent=value)
        assert trigger.serialize()[1]["traceparent"] is None
