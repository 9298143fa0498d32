"""Task-level metrics through Airflow's ``Stats``, recorded on a real Airflow run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import ENVIRONMENT, Published, dag_file
from dpone_airflow import _stats


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, str]]]:
    """Every metric the provider sent to Airflow's Stats: (kind, name, tags)."""
    sent: list[tuple[str, str, dict[str, str]]] = []

    class Recorder:
        def incr(self, stat: str, count: int = 1, rate: int = 1, *,
                 tags: dict[str, str] | None = None) -> None:
            sent.append(("incr", stat, dict(tags or {})))

        def timing(self, stat: str, dt: Any, *, tags: dict[str, str] | None = None) -> None:
            assert dt.total_seconds() >= 0
            sent.append(("timing", stat, dict(tags or {})))

    monkeypatch.setattr(_stats, "_stats", Recorder)
    return sent


@pytest.mark.smoke
def test_a_deferred_delivery_counts_its_deferral_completion_and_worker_time(
        published: Published, run_dag: Callable[[Any, int], Any],
        recorded: list[tuple[str, str, dict[str, str]]]) -> None:
    dag = dag_file("dpone_stats", 1, published.digests["measurements_async"],
                   published.environments_dir)
    assert run_dag(dag, 1).state == "success"
    counted = [(name, tags) for kind, name, tags in recorded if kind == "incr"]
    assert counted == [("dpone.delivery.deferred", {"environment": ENVIRONMENT}),
                       ("dpone.delivery.completed", {"environment": ENVIRONMENT})]
    timed = [tags["step"] for kind, name, tags in recorded
             if kind == "timing" and name == "dpone.delivery.worker_time"]
    assert timed == ["execute", "execute_complete"]


def test_a_failed_task_counts_its_stable_code(
        published: Published, run_dag: Callable[[Any, int], Any],
        recorded: list[tuple[str, str, dict[str, str]]]) -> None:
    published.fault("expire_receipt", "/mock/v1/dataset-jobs/", "GET", status=410, times=10)
    dag = dag_file("dpone_stats_failed", 1, published.digests["measurements_async"],
                   published.environments_dir)
    assert run_dag(dag, 1).state == "failed"
    assert ("incr", "dpone.delivery.failed",
            {"environment": ENVIRONMENT, "code": "REST_DELIVERY_RECEIPT_EXPIRED"}) in recorded
    assert all("op_v1_" not in value for _, _, tags in recorded for value in tags.values())
