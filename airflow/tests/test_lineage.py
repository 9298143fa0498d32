"""The operators' OpenLineage facets on a real Airflow: a task listener registered with Airflow
(as the OpenLineage provider's listener is) hands each finished dpone task to the provider's own
``ExtractorManager``, which calls ``get_openlineage_facets_on_complete`` / ``_on_failure``. The
run facet's form is checked against the JSON schema the provider ships; without the OpenLineage
package the hooks return None and read nothing."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import attr
import jsonschema
import pytest
from conftest import ENVIRONMENT, TOKEN, Published, dag_file
from dpone_airflow import _lineage
from dpone_airflow._lineage import LineageDataset, source_dataset
from dpone_airflow._locator import resolve
from dpone_airflow._runtime import read_plan
from dpone_airflow.operators import DponeDeliveryOperator
from dpone_airflow.pod_operator import DponeDeliveryPodOperator

from dpone.contracts.plan import ResolvedSource

pytest.importorskip("airflow.providers.openlineage", reason="the openlineage extra is not installed")

from airflow.providers.openlineage.extractors.manager import ExtractorManager
from airflow.utils.state import TaskInstanceState
from openlineage.client.serde import Serde

try:
    from airflow.providers.common.compat.sdk import hookimpl
except ImportError:  # an older common-compat provider (Airflow 2.10)
    from airflow.listeners import hookimpl  # type: ignore[no-redef,attr-defined,unused-ignore]
try:  # Airflow 3: the task runner's listeners
    from airflow.sdk.listener import get_listener_manager
except ImportError:  # Airflow 2
    from airflow.listeners.listener import get_listener_manager


class _Lineage:
    """What OpenLineage extracts from each finished task: (state, OperatorLineage)."""

    def __init__(self) -> None:
        self.seen: list[tuple[TaskInstanceState, Any]] = []

    def _extract(self, task_instance: Any, state: TaskInstanceState) -> None:
        # Where the OpenLineage listener finds them: the task runner's context on Airflow 3,
        # the task instance on Airflow 2.
        if hasattr(task_instance, "get_template_context") and hasattr(task_instance, "task"):
            context = task_instance.get_template_context()
            dag_run, task = context["dag_run"], context["task"]
        else:
            dag_run, task = task_instance.dag_run, task_instance.task
        self.seen.append((state, ExtractorManager().extract_metadata(
            dagrun=dag_run, task=task, task_instance_state=state, task_instance=task_instance)))

    @hookimpl
    def on_task_instance_success(self, previous_state: Any, task_instance: Any) -> None:
        self._extract(task_instance, TaskInstanceState.SUCCESS)

    @hookimpl
    def on_task_instance_failed(self, previous_state: Any, task_instance: Any,
                                error: Any) -> None:
        self._extract(task_instance, TaskInstanceState.FAILED)


@pytest.fixture
def lineage() -> Iterator[_Lineage]:
    listener = _Lineage()
    manager = get_listener_manager()
    manager.add_listener(listener)
    try:
        yield listener
    finally:
        manager.pm.unregister(listener)


def _schema() -> dict[str, Any]:
    from dpone_airflow._lineage_facet import SCHEMA_FILE  # noqa: PLC0415

    return dict(json.loads(resources.files("dpone_airflow").joinpath(SCHEMA_FILE).read_text()))


def _facet_document(extracted: Any) -> dict[str, Any]:
    """The run facet as an OpenLineage event carries it, checked against the shipped schema."""
    document = {"dponeDelivery": Serde.to_dict(extracted.run_facets["dponeDelivery"])}
    jsonschema.validate(document, _schema())
    return document["dponeDelivery"]


def _fields(facet: dict[str, Any]) -> dict[str, Any]:
    """The facet's own fields (without the ``_producer`` and ``_schemaURL`` of every facet)."""
    return {name: value for name, value in facet.items() if not name.startswith("_")}


def _datasets(extracted: Any) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    return ([(d.namespace, d.name) for d in extracted.inputs],
            [(d.namespace, d.name) for d in extracted.outputs])


def _receiver(published: Published) -> str:
    return published.receiver.base_url.rstrip("/")


def test_a_completed_task_names_its_source_the_endpoint_and_the_delivery(
        published: Published, run_dag: Callable[[Any, int], Any], lineage: _Lineage) -> None:
    digest = published.digests["measurements_async"]
    dag_run = run_dag(dag_file("dpone_lineage", 1, digest, published.environments_dir), 1)
    assert dag_run.state == "success"
    (ti,) = dag_run.get_task_instances()
    parent_id = ti.xcom_pull(task_ids="deliver")["parent_id"]
    (state, extracted), = lineage.seen  # the resumed task finished; the deferral is not an end
    assert state == TaskInstanceState.SUCCESS
    inputs, outputs = _datasets(extracted)
    assert inputs == [("file", str(published.registry / "data" / "measurements.csv"))]
    assert outputs == [(_receiver(published), "/mock/v1/dataset-jobs")]
    facet = _facet_document(extracted)
    assert _fields(facet) == {"planDigest": digest, "operationId": parent_id}
    assert facet["_schemaURL"].endswith("#/$defs/DponeDeliveryRunFacet")
    assert TOKEN not in json.dumps([Serde.to_dict(d) for d in extracted.inputs + extracted.outputs])


def test_a_blocked_task_carries_its_stable_code(
        published: Published, run_dag: Callable[[Any, int], Any], lineage: _Lineage) -> None:
    published.fault("expire_receipt", "/mock/v1/dataset-jobs/", "GET", status=410, times=10)
    digest = published.digests["measurements_async"]
    dag_run = run_dag(dag_file("dpone_lineage_blocked", 1, digest, published.environments_dir), 1)
    assert dag_run.state == "failed"
    (state, extracted), = lineage.seen
    assert state == TaskInstanceState.FAILED
    inputs, outputs = _datasets(extracted)
    assert inputs == [("file", str(published.registry / "data" / "measurements.csv"))]
    assert outputs == [(_receiver(published), "/mock/v1/dataset-jobs")]
    facet = _facet_document(extracted)
    assert facet["planDigest"] == digest
    assert facet["operationId"].startswith("op_v1_") and len(facet["operationId"]) == 70
    assert facet["errorCode"] == "REST_DELIVERY_RECEIPT_EXPIRED"
    assert TOKEN not in json.dumps(facet)


def test_an_unpinned_plan_fails_with_the_run_facet_alone(
        published: Published, run_dag: Callable[[Any, int], Any], lineage: _Lineage) -> None:
    dag_run = run_dag(dag_file("dpone_lineage_unpinned", 1, "not-a-digest",
                               published.environments_dir), 1)
    assert dag_run.state == "failed"
    (state, extracted), = lineage.seen
    assert state == TaskInstanceState.FAILED
    assert _datasets(extracted) == ([], [])
    facet = _facet_document(extracted)
    assert "planDigest" not in facet and "operationId" not in facet
    assert facet["errorCode"] == "input.invalid_argument"


def test_the_endpoint_renders_the_plans_resource_and_keeps_the_origins_port(
        published: Published) -> None:
    locator = resolve(ENVIRONMENT, published.environments_dir)
    plan = read_plan(locator, published.digests["measurements_sync"])
    source, endpoint = _lineage.plan_datasets(plan, None)
    assert source == LineageDataset("file", "data/measurements.csv")  # no root: the plan's path
    # mock.batch-ndjson@1 posts to /mock/v1/batches/{resource}; the workload's resource:
    assert plan.workload.sink.resource == "measurement_readings"
    assert endpoint == LineageDataset(_receiver(published),
                                      "/mock/v1/batches/measurement_readings")
    snapshot = plan.binding.snapshot.model_copy(update={"authority": "https://Receiver.Example"})
    moved = plan.model_copy(update={"binding": plan.binding.model_copy(
        update={"snapshot": snapshot})})
    assert _lineage.endpoint_dataset(moved).namespace == "https://receiver.example:443"


def test_the_source_is_named_without_a_credential() -> None:
    csv = ResolvedSource(type="file", format="csv", registry_path="data/m.csv")
    assert source_dataset(csv, "/srv/registry/") == LineageDataset("file",
                                                                   "/srv/registry/data/m.csv")
    assert source_dataset(csv, "s3://bucket/exports/") == LineageDataset(
        "s3://bucket", "exports/data/m.csv")
    table = ResolvedSource(type="postgres", connection_ref="warehouse", table="public.measures")
    assert source_dataset(table, None) == LineageDataset("dpone-connection://warehouse",
                                                         "public.measures")
    query = ResolvedSource(type="postgres", connection_ref="warehouse",
                           query="select * from measures where secret = 'x'")
    named = source_dataset(query, None)
    assert named.name.startswith("query:sha256:") and "secret" not in named.name


def test_the_pod_operator_carries_the_code_of_the_result_document(
        published: Published) -> None:
    """The pod's blocked result: the worker reads the plan by digest for the datasets."""
    digest = published.digests["measurements_async"]
    task = DponeDeliveryPodOperator(task_id="deliver", plan_digest=digest,
                                    environment=ENVIRONMENT, image="dpone-executor:test",
                                    environments_dir=published.environments_dir)
    parent = "op_v1_" + "d" * 64
    with pytest.raises(Exception, match=r"^REST_DELIVERY_RECEIPT_EXPIRED"):
        task.settle_document({"status": "blocked", "parent_id": parent, "blocked": {
            "code": "REST_DELIVERY_RECEIPT_EXPIRED", "operation_id": parent + "_0001",
            "remote_effect": "unknown", "allowed_actions": [], "exit_code": 4}})
    extracted = task.get_openlineage_facets_on_failure(None)
    assert extracted is not None
    assert _datasets(extracted) == ([("file", "data/measurements.csv")],
                                    [(_receiver(published), "/mock/v1/dataset-jobs")])
    assert _fields(_facet_document(extracted)) == {
        "planDigest": digest, "operationId": parent, "errorCode": "REST_DELIVERY_RECEIPT_EXPIRED"}


def test_a_result_document_puts_no_text_into_the_lineage(published: Published) -> None:
    """Only an operation id and an error code of their shapes reach the run facet."""
    task = DponeDeliveryPodOperator(task_id="deliver", plan_digest="not-a-digest",
                                    environment=ENVIRONMENT, image="dpone-executor:test",
                                    environments_dir=published.environments_dir)
    with pytest.raises(Exception, match="blocked"):
        task.settle_document({"status": "blocked", "parent_id": f"op_v1_{TOKEN}", "blocked": {
            "code": f"CODE {TOKEN}", "remote_effect": "unknown", "exit_code": 4}})
    extracted = task.get_openlineage_facets_on_failure(None)
    assert extracted is not None and _datasets(extracted) == ([], [])
    assert _fields(_facet_document(extracted)) == {}


def test_without_the_openlineage_provider_the_hooks_return_none_and_read_nothing(
        published: Published, run_dag: Callable[[Any, int], Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The provider's import fails (as where it is not installed): the task delivers as ever,
    and its hooks return None without reading the plan."""
    monkeypatch.setitem(sys.modules, "airflow.providers.openlineage.extractors", None)
    read: list[str] = []
    monkeypatch.setattr(DponeDeliveryOperator, "_plan_datasets",
                        lambda self: read.append(self.task_id))
    finished: list[Any] = []
    real = DponeDeliveryOperator.execute_complete

    def spy(self: DponeDeliveryOperator, *args: Any, **kwargs: Any) -> Any:
        finished.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(DponeDeliveryOperator, "execute_complete", spy)
    digest = published.digests["measurements_async"]
    dag_run = run_dag(dag_file("dpone_without_lineage", 1, digest, published.environments_dir), 1)
    assert dag_run.state == "success"
    (task,) = finished
    assert task.get_openlineage_facets_on_complete(None) is None
    assert task.get_openlineage_facets_on_failure(None) is None
    assert read == []


def test_the_shipped_schema_names_every_field_of_the_facet() -> None:
    """The facet class and its JSON schema are two copies of one shape: they must agree."""
    from dpone_airflow._lineage_facet import SCHEMA_URL, DponeDeliveryRunFacet  # noqa: PLC0415

    schema = _schema()
    assert SCHEMA_URL.partition("#")[0] == schema["$id"]
    definition = schema["$defs"][SCHEMA_URL.rpartition("/")[2]]
    assert set(definition["properties"]) == {f.name for f in attr.fields(DponeDeliveryRunFacet)}
