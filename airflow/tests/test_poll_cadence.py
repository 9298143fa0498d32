"""A deferred task's trigger polls a long job without writing a journal revision per poll.

The job runs for several poll intervals (pending, then running, then complete). The trigger
records the job's first answer, each change of phase and the ending; the unchanged answers in
between are counted and recorded with the next record, so the child's ``observation_ordinal``
still equals the receipt GETs the receiver saw.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import TOKEN, Published, dag_file, publish
from dpone_airflow import _runtime

from dpone.receiver import ReceiverConfig

_JOB_SECONDS = 6.0
"""How long the receiver's job takes: pending for half of it, running for the other half."""


def _poll_every_second(registry: Path) -> None:
    profile = registry / "profiles" / "mock.dataset-jobs@1.yaml"
    text = re.sub(r"^  poll_interval_s: .*$", "  poll_interval_s: 1",
                  profile.read_text(encoding="utf-8"), flags=re.M)
    profile.write_text(text, encoding="utf-8")


@pytest.fixture
def long_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Published]:
    yield from publish(tmp_path, monkeypatch,
                       ReceiverConfig(token=TOKEN, processing_seconds=_JOB_SECONDS),
                       edit=_poll_every_second)


def _observations(journal: Path, operation_id: str) -> tuple[int, list[dict[str, Any]]]:
    """The child's ``observation_ordinal`` and its recorded observations, oldest first."""
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as db:
        (ordinal,) = db.execute("SELECT observation_ordinal FROM rest_delivery_child"
                                " WHERE operation_id = ?", (operation_id,)).fetchone()
        rows = db.execute("SELECT document FROM rest_delivery_observation WHERE operation_id = ?"
                          " ORDER BY observation_ordinal", (operation_id,)).fetchall()
    return int(ordinal), [json.loads(document) for (document,) in rows]


def test_a_long_job_is_recorded_at_its_changes_not_at_every_poll(
        long_jobs: Published, run_dag: Callable[[Any, int], Any],
        observations: list[_runtime.Observed]) -> None:
    dag = dag_file("dpone_long_job", 1, long_jobs.digests["measurements_async"],
                   long_jobs.environments_dir)

    dag_run = run_dag(dag, 1)

    assert dag_run.state == "success"
    (ti,) = dag_run.get_task_instances()
    (child,) = ti.xcom_pull(task_ids="deliver")["children"]
    gets = sum(n for line, n in long_jobs.ledger()["requests"].items()
               if line.startswith("GET /mock/v1/dataset-jobs/"))
    ordinal, recorded = _observations(long_jobs.journal, child["operation_id"])
    phases = [o["phase"] for o in recorded]
    # About one poll a second for six seconds; the phases each recorded once, in order.
    assert gets >= 5
    assert phases == ["pending", "running", "complete"]
    assert sum(o.get("polls", 1) for o in recorded) == gets == ordinal
    # The trigger's steps that polled outnumber the revisions they wrote.
    revisions = {o.revision for o in observations}
    assert len(revisions) < len(observations)
    assert observations[-1].state_name == "verifying_succeeded"
