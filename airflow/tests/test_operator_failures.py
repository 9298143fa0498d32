"""How a dpone task fails on a real Airflow: one retry rule for both operators, a triggerer
without the credential, and commands that run as printed."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ENVIRONMENT, TOKEN, TOKEN_ENV, Published, dag_file, publish
from dpone_airflow import _runtime, operators
from dpone_airflow._compat import AirflowException, AirflowFailException
from dpone_airflow._credentials import AirflowCredentials
from dpone_airflow._locator import resolve
from dpone_airflow._outcome import blocked, from_document, may_retry
from dpone_airflow.links import LINK_XCOM_KEY, DeliveryLink
from dpone_airflow.pod_operator import DponeDeliveryPodOperator

try:  # Airflow 3
    from airflow.sdk.exceptions import TaskDeferred
except ImportError:  # Airflow 2
    from airflow.exceptions import TaskDeferred  # type: ignore[no-redef,attr-defined,unused-ignore]

from dpone.artifacts import open_artifact_store
from dpone.contracts import DponeError, RemoteEffect
from dpone.executor.supervisor import DeliveryBlocked
from dpone.receiver import ReceiverConfig

PARENT = "op_v1_" + "e" * 64
CHILD = PARENT + "_0001"


@pytest.fixture
def failures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every failure a task raised (Airflow 3's in-process runner gives a failure callback no
    exception to read)."""
    raised: list[Any] = []
    real = operators._exception

    def spy(failure: Any) -> Exception:
        raised.append(failure)
        return real(failure)

    monkeypatch.setattr(operators, "_exception", spy)
    return raised


def _blocked(code: str) -> Any:
    return DeliveryBlocked(code=code, parent_id=PARENT, operation_id=CHILD,
                           remote_effect=RemoteEffect.NONE_PROVEN, evidence={"id": "job-7"},
                           allowed_actions=("fix_credential", "resume_delivery"),
                           checkpoint_frontier=0)


def _document(code: str, exit_code: int) -> dict[str, Any]:
    return {"schema": "dpone.delivery_result.v1", "status": "blocked", "parent_id": PARENT,
            "blocked": {"code": code, "operation_id": CHILD, "remote_effect": "none_proven",
                        "allowed_actions": ["fix_credential", "resume_delivery"],
                        "operator_action": "fix", "exit_code": exit_code,
                        "evidence": {"id": "job-7"}}}


@pytest.mark.parametrize(("code", "exit_code", "retried"), [
    ("credential.rejected", 3, True), ("credential.unavailable", 3, True),
    ("REST_DELIVERY_REMOTE_EFFECT_UNKNOWN", 4, False),
    ("REST_DELIVERY_RECEIPT_EXPIRED", 4, False), ("input.invalid_argument", 2, False)])
def test_both_operators_retry_exactly_exit_class_3(code: str, exit_code: int,
                                                   retried: bool) -> None:
    """The in-process operator settles a ``DeliveryBlocked``, the pod operator the document the
    pod wrote: the same code is retried by both or by neither (``may_retry``)."""
    assert may_retry(code) is retried
    assert blocked(_blocked(code), ENVIRONMENT).retryable is retried
    assert from_document(_document(code, exit_code), ENVIRONMENT).retryable is retried
    expected = AirflowException if retried else AirflowFailException
    in_process = operators.DponeDeliveryOperator(task_id="deliver", plan_digest="sha256:" + "0" * 64,
                                                 environment=ENVIRONMENT)
    pod = DponeDeliveryPodOperator(task_id="deliver", plan_digest="sha256:" + "0" * 64,
                                   environment=ENVIRONMENT, image="dpone-executor:test",
                                   secrets=(), namespace="dpone")
    with pytest.raises(AirflowException) as in_process_raised:
        in_process._settle(_blocked(code), None, 0.0, "execute")  # type: ignore[arg-type]
    with pytest.raises(AirflowException) as pod_raised:
        pod.settle_document(_document(code, exit_code))
    for raised in (in_process_raised.value, pod_raised.value):
        assert type(raised) is expected, (code, type(raised))


def test_a_reconciliation_is_printed_with_its_proof() -> None:
    """The printed reconcile command runs as it is: the job the evidence names, else a proof
    placeholder to fill in (never a bare command that exits ``reconcile.proof_required``)."""
    found = from_document(_document("REST_DELIVERY_UNSAFE_RETRY", 4) | {
        "blocked": {**_document("REST_DELIVERY_UNSAFE_RETRY", 4)["blocked"],
                    "allowed_actions": ["reconcile_delivery_key"],
                    "evidence": {"duplicate_job_id": "job-7"}}}, ENVIRONMENT)
    assert (f"dpone delivery reconcile --operation-id {CHILD} --environment {ENVIRONMENT} "
            "--receipt-id job-7 --apply") in found.text
    unknown = _document("REST_DELIVERY_RECEIPT_EXPIRED", 4)  # its own receipt proves nothing
    unknown["blocked"].update(allowed_actions=["reconcile_delivery_key"])
    text = from_document(unknown, ENVIRONMENT).text
    assert f"--operation-id {CHILD} --environment {ENVIRONMENT} --receipt-id JOB_ID --apply" in text
    assert f"--operation-id {CHILD} --environment {ENVIRONMENT} --evidence FILE --apply" in text
    reconcile_lines = [line for line in text.splitlines() if "delivery reconcile" in line]
    assert reconcile_lines and all(line.rstrip().endswith("--apply") for line in reconcile_lines)


@pytest.mark.smoke
def test_a_triggerer_without_the_credential_fails_the_task_once(
        published: Published, run_dag: Callable[[Any, int], Any],
        monkeypatch: pytest.MonkeyPatch, failures: list[Any], continuations: list[str]) -> None:
    """The worker submits with the credential; the triggerer has none: its first poll stops with
    ``credential.unavailable`` and the resumed task fails once with that code and the command
    that continues the delivery, instead of deferring again and again (and with retries=2,
    not retried: another deferral reaches the same triggerer)."""
    real = _runtime.observe_once
    polls: list[str] = []

    def triggerer_without_credential(locator: Any, operation_id: str, quiet: Any = None) -> Any:
        polls.append(operation_id)
        token = os.environ.pop(TOKEN_ENV)
        try:
            return real(locator, operation_id, quiet)
        finally:
            os.environ[TOKEN_ENV] = token

    monkeypatch.setattr(_runtime, "observe_once", triggerer_without_credential)
    dag = dag_file("dpone_triggerer_no_credential", 1, published.digests["measurements_async"],
                   published.environments_dir, retries=2)
    dag_run = run_dag(dag, 1)
    assert dag_run.state == "failed"
    (ti,) = dag_run.get_task_instances()
    assert ti.state == "failed" and ti.try_number == 1
    assert len(polls) == 1 and continuations == []  # one deferral, no loop
    (failure,) = failures
    assert failure.code == "credential.unavailable" and not failure.retryable
    assert failure.text.startswith("credential.unavailable: the receipt trigger of op_v1_")
    assert "the task is not deferred again" in failure.text
    assert f"--environment {ENVIRONMENT} --apply" in failure.text  # the resume command
    assert published.posts() == 1  # nothing resent


def test_a_rejected_credential_is_retried_and_the_retry_delivers(
        published: Published, run_dag: Callable[[Any, int], Any],
        failures: list[Any]) -> None:
    """A 401 at submit proves the request had no effect: ``credential.rejected`` (exit class 3)
    is retried by Airflow, and the retry submits the same delivery key once."""
    published.fault("status", "/mock/v1/batches/", "POST", status=401, times=1)
    dag = dag_file("dpone_rejected_then_fixed", 6, published.digests["measurements_sync"],
                   published.environments_dir, retries=1, retry_delay=dt.timedelta(0))
    dag_run = run_dag(dag, 6)
    (ti,) = dag_run.get_task_instances()
    assert [f.code for f in failures] == ["credential.rejected"]
    assert failures[0].retryable
    assert (dag_run.state, ti.state, ti.try_number) == ("success", "success", 2)
    ledger = published.ledger()
    assert ledger["duplicate_mutations"] == 0


@pytest.fixture
def published_with_connection(tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> Iterator[Published]:
    """The example plans whose binding names ``conn:mock_measurements``: the token lives only in
    the Airflow connection ``mock_measurements`` (Airflow's environment-variable secrets backend,
    ``AIRFLOW_CONN_MOCK_MEASUREMENTS``), no ``DPONE_CONN_*`` variable is set."""
    monkeypatch.setenv("AIRFLOW_CONN_MOCK_MEASUREMENTS",
                       json.dumps({"conn_type": "http", "password": TOKEN}))
    yield from publish(tmp_path, monkeypatch, ReceiverConfig(token=TOKEN, processing_seconds=1.0),
                       credential_ref="conn:mock_measurements")


@pytest.mark.smoke
def test_the_receiver_credential_comes_from_an_airflow_connection(
        published_with_connection: Published, run_dag: Callable[[Any, int], Any],
        observations: list[Any]) -> None:
    """Worker and triggerer read the token through Airflow's connections (any secrets backend):
    the async delivery defers, is observed with it and completes."""
    published = published_with_connection
    assert not any(name.startswith("DPONE_CONN_") for name in os.environ)
    dag = dag_file("dpone_airflow_connection", 1, published.digests["measurements_async"],
                   published.environments_dir)
    dag_run = run_dag(dag, 1)
    assert dag_run.state == "success"
    assert observations and not observations[-1].observing  # the trigger polled with it
    ledger = published.ledger()
    assert ledger["mutations_total"] == 1 and ledger["duplicate_mutations"] == 0
    (ti,) = dag_run.get_task_instances()
    assert TOKEN not in json.dumps(ti.xcom_pull(task_ids="deliver"))


def test_a_connection_without_the_field_is_credential_unavailable(
        published_with_connection: Published, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``basic`` binding needs the connection's login and password: one missing is
    ``credential.unavailable`` naming the connection and the field, never a value."""
    plan = _runtime.published_plan(
        open_artifact_store(str(published_with_connection.state / "artifacts")),
        published_with_connection.digests["measurements_sync"])
    binding = plan.binding.snapshot.model_copy(update={"auth_provider": "basic",
                                                       "credential_ref": "conn:vendor_eu"})
    monkeypatch.setenv("AIRFLOW_CONN_VENDOR_EU", json.dumps({"conn_type": "http",
                                                             "password": "secret-1"}))
    with pytest.raises(DponeError) as missing:
        AirflowCredentials().resolve(binding)
    assert missing.value.code == "credential.unavailable"
    assert "'vendor_eu'" in missing.value.message and "has no login" in missing.value.message
    assert "secret-1" not in str(missing.value)
    monkeypatch.setenv("AIRFLOW_CONN_VENDOR_EU", json.dumps({"conn_type": "http", "login": "u",
                                                             "password": "secret-1"}))
    credential = AirflowCredentials().resolve(binding)
    assert (credential.provider, credential.field_names) == ("basic", ("password", "username"))
    assert credential.secret("username").reveal() == "u"


@pytest.mark.parametrize("kind", ["in-process", "pod"])
def test_a_deferral_timeout_travels_with_the_deferral(published: Published, kind: str) -> None:
    """``deferral_timeout`` bounds one deferral on a receipt (Airflow fails the task with
    TaskDeferralTimeout past it; the delivery stays admitted for the next try)."""
    timeout = dt.timedelta(minutes=30)
    common = {"task_id": "deliver", "plan_digest": published.digests["measurements_async"],
              "environment": ENVIRONMENT, "environments_dir": published.environments_dir,
              "deferral_timeout": timeout}
    task = (operators.DponeDeliveryOperator(**common) if kind == "in-process" else
            DponeDeliveryPodOperator(**common, image="dpone-executor:test", namespace="dpone"))
    with pytest.raises(TaskDeferred) as deferred:
        task._defer_on("op_v1_" + "c" * 64 + "_0001",
                       resolve(ENVIRONMENT, published.environments_dir))
    assert deferred.value.timeout == timeout
    untimed = operators.DponeDeliveryOperator(**{**common, "deferral_timeout": None})
    with pytest.raises(TaskDeferred) as forever:
        untimed._defer_on("op_v1_" + "c" * 64 + "_0001",
                          resolve(ENVIRONMENT, published.environments_dir))
    assert forever.value.timeout is None


def test_a_killed_task_says_the_delivery_stays_admitted(monkeypatch: pytest.MonkeyPatch) -> None:
    task = operators.DponeDeliveryOperator(task_id="deliver", plan_digest="sha256:" + "0" * 64,
                                           environment=ENVIRONMENT)
    task._note(operation_id=PARENT)
    said: list[str] = []

    class Log:
        def warning(self, message: str, *args: object) -> None:
            said.append(message % args)

    monkeypatch.setattr(type(task), "log", property(lambda _: Log()))
    task.on_kill()
    (text,) = said
    assert f"during delivery {PARENT}: the delivery stays admitted" in text
    assert f"dpone delivery inspect --operation-id {PARENT} --environment {ENVIRONMENT}" in text


@pytest.mark.smoke
def test_the_task_links_to_its_delivery(published: Published,
                                        run_dag: Callable[[Any, int], Any]) -> None:
    """``delivery_url`` makes the task's "dpone delivery" extra link: the deployment's page of
    the delivery the task ran (stored by Airflow 3 when the task ends, read from the task's
    XCom by Airflow 2's webserver)."""
    template = "https://console.example/dpone/{environment}/{operation_id}"
    dag = dag_file("dpone_linked", 1, published.digests["measurements_async"],
                   published.environments_dir, delivery_url=template)
    dag_run = run_dag(dag, 1)
    assert dag_run.state == "success"
    (ti,) = dag_run.get_task_instances()
    parent = ti.xcom_pull(task_ids="deliver")["parent_id"]
    expected = f"https://console.example/dpone/{ENVIRONMENT}/{parent}"
    assert ti.xcom_pull(task_ids="deliver", key=LINK_XCOM_KEY) == expected
    task = dag.get_task("deliver")
    assert [link.name for link in task.operator_extra_links] == ["dpone delivery"]
    # Airflow 3 stores the link the worker computed; Airflow 2 computes it when it is shown.
    key = getattr(DeliveryLink(), "xcom_key", None)
    shown = (ti.xcom_pull(task_ids="deliver", key=key) if key is not None
             else DeliveryLink().get_link(task, ti_key=ti.key))
    assert shown == expected


def test_a_link_template_must_name_the_operation_id() -> None:
    for template in ("https://console.example/", "https://c.example/{operation_id}/{secret}"):
        with pytest.raises(ValueError, match="must name"):
            operators.DponeDeliveryOperator(task_id="deliver", plan_digest="sha256:" + "0" * 64,
                                            environment=ENVIRONMENT, delivery_url=template)
