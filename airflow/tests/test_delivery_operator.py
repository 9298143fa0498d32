"""The deferrable operator on a real Airflow: ``dag.test()`` runs the task, imports the trigger
by its serialized classpath, runs it inline and resumes the task with its event."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ENVIRONMENT, TOKEN, Published, dag_file
from dpone_airflow import _runtime, operators


def _dag(published: Published, dag_id: str, days: int, plan: str, **extra: Any) -> Any:
    return dag_file(dag_id, days, published.digests.get(plan, plan), published.environments_dir,
                    **extra)


@pytest.fixture
def failures(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The text of every failure the task raised (Airflow 3's in-process test runner gives a
    failure callback no exception to read)."""
    raised: list[str] = []
    real = operators._exception

    def spy(failure: Any) -> Exception:
        raised.append(failure.text)
        return real(failure)

    monkeypatch.setattr(operators, "_exception", spy)
    return raised


def _task(dag_run: Any) -> Any:
    (ti,) = dag_run.get_task_instances()
    return ti


@pytest.mark.smoke
def test_async_job_defers_on_its_receipt_and_completes(
        published: Published, run_dag: Callable[[Any, int], Any],
        observations: list[_runtime.Observed], continuations: list[str]) -> None:
    dag = _dag(published, "dpone_async_one_child", 1, "measurements_async")
    dag_run = run_dag(dag, 1)
    assert dag_run.state == "success"
    ti = _task(dag_run)
    assert ti.state == "success"
    # The task deferred once: the trigger observed the receipt (read-only) until the job left
    # observation, then the task resumed once and verified and promoted from the journal.
    # (The first step finds the receipt not due yet, "accepted", unless the trigger started
    # later than the poll interval: on a loaded machine its first step already polls.)
    assert observations and {o.state_name for o in observations[:-1]} <= {"accepted", "waiting"}
    assert not observations[-1].observing
    assert observations[-1].state_name == "verifying_succeeded"
    assert len(continuations) == 1
    ledger = published.ledger()
    assert ledger["mutations_total"] == 1 and ledger["duplicate_mutations"] == 0
    assert published.posts() == 1
    result = ti.xcom_pull(task_ids="deliver")
    assert result["kind"] == "completed" and result["checkpoint_frontier"] == 1
    # The XCom is the journal's final word: the child promoted, with the delivery's totals.
    (child,) = result["children"]
    assert child["state_name"] == "final_succeeded_full_promoted"
    assert (result["children_total"], result["boundary_from"], result["boundary_to"]) == (
        1, "2026-08-01", "2026-08-02")
    assert result["rows_total"] > 0
    assert result["plan_digest"] == published.digests["measurements_async"]
    assert TOKEN not in repr(result)


def test_a_second_run_of_the_same_interval_resends_nothing(
        published: Published, run_dag: Callable[[Any, int], Any]) -> None:
    """A retried or re-run task resumes the admitted delivery: one mutation per delivery key."""
    for dag_id in ("dpone_async_first", "dpone_async_again"):
        dag = _dag(published, dag_id, 6, "measurements_async")
        assert run_dag(dag, 6).state == "success"
    ledger = published.ledger()
    assert ledger["mutations_total"] == 2  # 6 days in 3-day windows: two children, two keys
    assert ledger["duplicate_mutations"] == 0
    assert published.posts() == 2


def test_sync_batches_complete_without_deferral(
        published: Published, run_dag: Callable[[Any, int], Any],
        observations: list[_runtime.Observed]) -> None:
    dag = _dag(published, "dpone_sync", 6, "measurements_sync")
    dag_run = run_dag(dag, 6)
    assert dag_run.state == "success"
    assert observations == []
    result = _task(dag_run).xcom_pull(task_ids="deliver")
    children = len(result["children"])
    assert children >= 1 and result["checkpoint_frontier"] == children
    ledger = published.ledger()
    assert ledger["mutations_total"] == children and ledger["duplicate_mutations"] == 0


@pytest.mark.smoke
def test_a_blocked_delivery_fails_with_its_code_and_the_operator_commands(
        published: Published, run_dag: Callable[[Any, int], Any], failures: list[str]) -> None:
    """The receipt expires while the task is deferred: the trigger records it, the resumed task
    rereads the journal and fails with the stable code, without retry and without a resend."""
    published.fault("expire_receipt", "/mock/v1/dataset-jobs/", "GET", status=410, times=10)
    dag = _dag(published, "dpone_async_expired", 1, "measurements_async", retries=2)
    dag_run = run_dag(dag, 1)
    assert dag_run.state == "failed"
    ti = _task(dag_run)
    assert ti.state == "failed" and ti.try_number == 1  # not retried
    (text,) = failures
    assert text.startswith("REST_DELIVERY_RECEIPT_EXPIRED: delivery op_v1_")
    assert "allowed actions: inspect_evidence, query_by_delivery_key, reconcile_delivery_key" in text
    assert "dpone delivery inspect --operation-id op_v1_" in text
    assert f"--environment {ENVIRONMENT}" in text
    assert "dpone delivery reconcile --operation-id op_v1_" in text
    assert TOKEN not in text
    assert published.posts() == 1


def test_an_unpinned_plan_fails_with_its_code(published: Published,
                                             run_dag: Callable[[Any, int], Any],
                                             failures: list[str]) -> None:
    dag = _dag(published, "dpone_unpinned", 1, "not-a-digest")
    assert run_dag(dag, 1).state == "failed"
    assert failures and failures[0].startswith("input.invalid_argument: plan_digest")
    assert published.ledger()["requests"] == {}


def _switch_off(published: Published) -> None:
    """Turn the environment's kill switch ``runtime.features.rest_bulk_delivery_v1`` off."""
    path = Path(published.environments_dir) / f"{ENVIRONMENT}.yaml"
    on = "runtime:\n  features: {rest_bulk_delivery_v1: true}\n"
    text = path.read_text(encoding="utf-8")
    assert text.count(on) == 1, "the example environment changed shape"
    path.write_text(text.replace(on, on.replace("true", "false")), encoding="utf-8")


def test_the_kill_switch_off_admits_no_new_delivery(
        published: Published, run_dag: Callable[[Any, int], Any], failures: list[str]) -> None:
    _switch_off(published)
    dag = _dag(published, "dpone_switched_off", 6, "measurements_sync", retries=2)
    dag_run = run_dag(dag, 6)
    assert dag_run.state == "failed"
    ti = _task(dag_run)
    assert ti.state == "failed" and ti.try_number == 1  # exit class 2: not retried
    (text,) = failures
    assert text.startswith("runtime.feature_disabled: runtime.features.rest_bulk_delivery_v1 "
                           f"is off in {published.environments_dir}/{ENVIRONMENT}.yaml")
    assert published.ledger()["requests"] == {}
    assert not published.journal.exists()  # nothing admitted: not even a journal


def test_a_task_deferred_before_the_switch_went_off_completes(
        published: Published, run_dag: Callable[[Any, int], Any],
        monkeypatch: pytest.MonkeyPatch, continuations: list[str]) -> None:
    """The switch goes off while the task is deferred on its receipt: the trigger keeps
    observing and the resumed task verifies and promotes the admitted delivery."""
    real = _runtime.observe_once

    def observe_after_switching_off(locator: Any, operation_id: str, quiet: Any = None) -> Any:
        _switch_off(published)
        monkeypatch.setattr(_runtime, "observe_once", real)
        return real(locator, operation_id, quiet)

    monkeypatch.setattr(_runtime, "observe_once", observe_after_switching_off)
    dag_run = run_dag(_dag(published, "dpone_deferred_then_off", 1, "measurements_async"), 1)
    assert dag_run.state == "success"
    environment = Path(published.environments_dir) / f"{ENVIRONMENT}.yaml"
    assert "{rest_bulk_delivery_v1: false}" in environment.read_text(encoding="utf-8")
    assert len(continuations) == 1
    result = _task(dag_run).xcom_pull(task_ids="deliver")
    assert result["kind"] == "completed" and result["checkpoint_frontier"] == 1
    assert published.posts() == 1
