"""``DponeDeliveryPodOperator``: the pod it asks Kubernetes for (rendered with
``build_pod_request_obj(dry_run=True)``, no cluster) and what it does with the executor's result
document, on a real Airflow: the pod's run is the executor's own ``run_pinned`` in-process."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from airflow.providers.cncf.kubernetes.secret import Secret
from conftest import ENVIRONMENT, TOKEN, TOKEN_ENV, Published, span_text, traceparent_of
from dpone_airflow.pod_operator import DponeDeliveryPodOperator
from dpone_airflow.triggers import DeliveryReceiptTrigger
from kubernetes.client import ApiClient

try:  # Airflow 3
    from airflow.sdk.exceptions import AirflowFailException, TaskDeferred
except ImportError:  # Airflow 2
    from airflow.exceptions import (  # type: ignore[no-redef,attr-defined,unused-ignore]
        AirflowFailException,
        TaskDeferred,
    )

DIGEST = "sha256:" + "ab" * 32
IMAGE = "registry.example/dpone-executor:0.75.0"
SECRETS = [Secret("env", TOKEN_ENV, "dpone-mock-measurements", "token"),
           Secret("volume", "/var/run/secrets/dpone/postgres", "dpone-journal-pg")]


def _operator(**extra: Any) -> DponeDeliveryPodOperator:
    return DponeDeliveryPodOperator(task_id="deliver", plan_digest=DIGEST,
                                    environment=ENVIRONMENT, image=IMAGE, secrets=SECRETS,
                                    namespace="dpone", **extra)


def _rendered_pod(task: DponeDeliveryPodOperator) -> dict[str, Any]:
    start = dt.datetime(2026, 8, 1, tzinfo=dt.UTC)
    context = {"data_interval_start": start,
               "data_interval_end": start + dt.timedelta(days=1)}
    task.render_template_fields(context)  # type: ignore[arg-type]
    pod = task.build_pod_request_obj(dry_run=True)
    rendered: dict[str, Any] = ApiClient().sanitize_for_serialization(pod)
    return rendered


def test_the_pod_runs_the_pinned_plan_as_a_restricted_non_root_user(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A worker that holds the credential must not copy it into the pod.
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    pod = _rendered_pod(_operator())
    spec = pod["spec"]
    (base,) = [c for c in spec["containers"] if c["name"] == "base"]
    assert base["image"] == IMAGE
    assert base["command"] == ["dpone-executor"]
    assert base["args"] == ["run", "--plan-digest", DIGEST, "--interval-start", "2026-08-01",
                            "--interval-end", "2026-08-02", "--environment", ENVIRONMENT,
                            "--format", "json"]
    # Credentials: a secretKeyRef and a Secret volume, never a value.
    env = {e["name"]: e for e in base["env"]}
    assert env[TOKEN_ENV] == {"name": TOKEN_ENV, "valueFrom": {"secretKeyRef": {
        "name": "dpone-mock-measurements", "key": "token"}}}
    assert {n: e.get("value") for n, e in env.items() if n != TOKEN_ENV} == {
        "HOME": "/scratch", "TMPDIR": "/scratch"}
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["name"]: m for m in base["volumeMounts"]}
    (secret_volume,) = [v for v in volumes.values() if "secret" in v]
    assert secret_volume["secret"] == {"secretName": "dpone-journal-pg"}
    assert mounts[secret_volume["name"]]["mountPath"] == "/var/run/secrets/dpone/postgres"
    assert mounts[secret_volume["name"]]["readOnly"] is True
    assert volumes["scratch"] == {"name": "scratch", "emptyDir": {}}
    assert mounts["scratch"]["mountPath"] == "/scratch"
    assert base["resources"] == {
        "requests": {"cpu": "250m", "memory": "256Mi", "ephemeral-storage": "256Mi"},
        "limits": {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "2Gi"}}
    assert spec["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001,
        "seccompProfile": {"type": "RuntimeDefault"}}
    assert base["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10001,
        "readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
        "privileged": False, "capabilities": {"drop": ["ALL"]}}
    # The executor's result reaches Airflow through the XCom sidecar.
    assert [c["name"] for c in spec["containers"]] == ["base", "airflow-xcom-sidecar"]
    assert spec["restartPolicy"] == "Never"
    assert TOKEN not in json.dumps(pod)


def test_a_file_source_root_is_a_locator_argument() -> None:
    args = _rendered_pod(_operator(source_root="/data"))["spec"]["containers"][0]["args"]
    assert args[-2:] == ["--source-root", "/data"]


@pytest.mark.parametrize("kwarg", ["env_vars", "env_from", "arguments", "cmds",
                                   "container_security_context"])
def test_credential_values_and_a_weaker_context_are_refused(kwarg: str) -> None:
    with pytest.raises(TypeError, match="Kubernetes Secret refs"):
        _operator(**{kwarg: {TOKEN_ENV: TOKEN}})


def _pending(published: Published, operation_id: str) -> dict[str, Any]:
    return {"schema": "dpone.delivery_result.v1", "status": "pending",
            "parent_id": operation_id[:-5], "checkpoint_frontier": 0,
            "pending": {"operation_id": operation_id, "ordinal": 1,
                        "continuation_kind": "poll_receipt", "next_check_after": None}}


def test_a_pending_result_defers_on_the_receipt_trigger(published: Published) -> None:
    task = _operator(environments_dir=published.environments_dir)
    child = "op_v1_" + "c" * 64 + "_0001"
    with pytest.raises(TaskDeferred) as deferred:
        task.settle_document(_pending(published, child))
    trigger = deferred.value.trigger
    assert isinstance(trigger, DeliveryReceiptTrigger)
    assert deferred.value.method_name == "execute_complete"
    classpath, kwargs = trigger.serialize()
    assert classpath == "dpone_airflow.triggers.DeliveryReceiptTrigger"
    assert kwargs["operation_id"] == child
    assert kwargs["journal_locator"]["journal"] == str(published.journal)
    assert TOKEN not in json.dumps(kwargs)


def test_a_blocked_result_fails_with_its_code_and_commands() -> None:
    parent = "op_v1_" + "d" * 64
    document = {"schema": "dpone.delivery_result.v1", "status": "blocked", "parent_id": parent,
                "blocked": {"code": "REST_DELIVERY_RECEIPT_EXPIRED",
                            "operation_id": parent + "_0001", "remote_effect": "unknown",
                            "allowed_actions": ["inspect_evidence", "reconcile_delivery_key"],
                            "operator_action": "reconcile", "exit_code": 4}}
    with pytest.raises(AirflowFailException) as failed:
        _operator().settle_document(document)
    text = str(failed.value)
    assert text.startswith(f"REST_DELIVERY_RECEIPT_EXPIRED: delivery {parent} blocked at child")
    assert "allowed actions: inspect_evidence, reconcile_delivery_key" in text
    assert f"dpone delivery reconcile --operation-id {parent}_0001 --environment " \
           f"{ENVIRONMENT}" in text


def test_a_result_it_cannot_read_fails_closed() -> None:
    with pytest.raises(AirflowFailException, match=r"^contract.schema_invalid: "):
        _operator().settle_document({"status": "maybe"})


_DAG_FILE = """\
import datetime as dt

from airflow import DAG

try:
    from airflow.sdk import DeltaDataIntervalTimetable
except ImportError:  # Airflow 2
    from airflow.timetables.interval import DeltaDataIntervalTimetable

from dpone_airflow.pod_operator import DponeDeliveryPodOperator

with DAG({dag_id!r}, schedule=DeltaDataIntervalTimetable(dt.timedelta(days=1)),
         start_date=dt.datetime(2026, 8, 1, tzinfo=dt.timezone.utc), catchup=False) as dag:
    DponeDeliveryPodOperator(task_id="deliver", plan_digest={plan_digest!r},
                             environment={environment!r}, environments_dir={environments_dir!r},
                             image="dpone-executor:test", namespace="dpone")
"""


@pytest.fixture
def pod_envs() -> list[dict[str, Any]]:
    """The environment of the base container of every pod the operator asked for."""
    return []


@pytest.fixture
def pod_runs(published: Published, monkeypatch: pytest.MonkeyPatch,
             pod_envs: list[dict[str, Any]]) -> list[list[str]]:
    """The executor pod, played in-process: the rendered arguments of every run (and the pod
    spec's environment, in ``pod_envs``), handed to ``dpone-executor``'s own ``run_pinned``; its
    result document is the pod's XCom."""
    from dpone.cli.executor_app import run_pinned  # noqa: PLC0415

    monkeypatch.setenv("DPONE_ENVIRONMENTS", published.environments_dir)
    runs: list[list[str]] = []

    def pod(self: DponeDeliveryPodOperator, context: Mapping[str, Any]) -> Any:
        args = list(self.arguments)
        runs.append(args)
        spec = ApiClient().sanitize_for_serialization(self.build_pod_request_obj(dry_run=True))
        pod_envs.append({e["name"]: e for e in spec["spec"]["containers"][0]["env"]})
        option = dict(zip(args[1::2], args[2::2], strict=False))
        outcome = run_pinned(plan_digest=option["--plan-digest"],
                             interval_start=dt.date.fromisoformat(option["--interval-start"]),
                             interval_end=dt.date.fromisoformat(option["--interval-end"]),
                             environment=option["--environment"],
                             source_root=published.registry)
        return outcome.document.model_dump(mode="json", by_alias=True)

    monkeypatch.setattr(KubernetesPodOperator, "execute", pod)
    return runs


def test_an_async_job_from_the_pod_defers_and_completes(
        published: Published, pod_runs: list[list[str]], pod_envs: list[dict[str, Any]],
        run_dag: Callable[[Any, int], Any], continuations: list[str], spans: Any,
        span_exporter: Any) -> None:
    folder = Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dpone_pod_async.py"
    path.write_text(_DAG_FILE.format(
        dag_id="dpone_pod_async", plan_digest=published.digests["measurements_async"],
        environment=ENVIRONMENT, environments_dir=published.environments_dir), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("dags_dpone_pod_async", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    dag_run = run_dag(module.dag, 1)
    assert dag_run.state == "success"
    (args,) = pod_runs  # one pod; the resumed task rereads the journal, it starts no pod
    assert args[args.index("--interval-start") + 1] == "2026-08-01"
    assert args[args.index("--interval-end") + 1] == "2026-08-02"
    assert len(continuations) == 1
    ledger = published.ledger()
    assert ledger["mutations_total"] == 1 and ledger["duplicate_mutations"] == 0
    (ti,) = dag_run.get_task_instances()
    result = ti.xcom_pull(task_ids="deliver")
    assert result["kind"] == "completed" and result["checkpoint_frontier"] == 1
    # The pod continues the task's trace: its TRACEPARENT names the operator's execute span,
    # whose context the receipt trigger and the resumed task continue too.
    (execute,) = spans("dpone.airflow.execute")
    (env,) = pod_envs
    assert env["TRACEPARENT"] == {"name": "TRACEPARENT", "value": traceparent_of(execute)}
    assert execute.attributes["dpone.operation_id"] == result["parent_id"]
    (complete,) = spans("dpone.airflow.execute_complete")
    assert complete.parent is not None and complete.parent.span_id == execute.context.span_id
    assert TOKEN not in json.dumps(env) and TOKEN not in span_text(span_exporter)
