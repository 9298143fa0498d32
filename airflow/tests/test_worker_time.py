"""How long a deferrable delivery holds a worker while the receiver takes half an hour: the
receiver's clock runs 180 times faster than the wall clock, so its 30-minute job takes 10 s;
the task holds a worker only in ``execute`` and ``execute_complete`` (Airflow's own task duration
includes the deferral). Writes ``test_artifacts/airflow_worker_time.json``."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import TOKEN, Published, dag_file, publish
from dpone_airflow import _runtime
from dpone_airflow.operators import DponeDeliveryOperator

from dpone.receiver import ReceiverConfig

SPEED_UP = 180.0
JOB_SECONDS = 30 * 60.0  # as the receiver reports it
WORKER_BUDGET_S = 5.0
_ARTIFACTS = Path(os.environ.get("DPONE_TEST_ARTIFACTS", Path(__file__).resolve().parents[2]
                                 / "test_artifacts"))


class _FastClock:
    """The receiver's clock: starts now, runs ``SPEED_UP`` times faster than the wall clock."""

    def __init__(self) -> None:
        self._start = time.time()

    def __call__(self) -> float:
        return self._start + (time.time() - self._start) * SPEED_UP


@pytest.fixture
def half_hour_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Published]:
    yield from publish(tmp_path, monkeypatch, ReceiverConfig(
        token=TOKEN, processing_seconds=JOB_SECONDS, clock=_FastClock()))


@pytest.fixture
def worker_steps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    """(step, seconds) for every ``execute`` / ``execute_complete`` the task ran."""
    steps: list[tuple[str, float]] = []

    def timed(name: str) -> Callable[..., Any]:
        real = getattr(DponeDeliveryOperator, name)

        def step(self: DponeDeliveryOperator, *args: Any, **kwargs: Any) -> Any:
            started = time.monotonic()
            try:
                return real(self, *args, **kwargs)
            finally:
                steps.append((name, time.monotonic() - started))

        return step

    for name in ("execute", "execute_complete"):
        monkeypatch.setattr(DponeDeliveryOperator, name, timed(name))
    return steps


def test_a_half_hour_job_holds_a_worker_for_seconds(
        half_hour_jobs: Published, run_dag: Callable[[Any, int], Any],
        worker_steps: list[tuple[str, float]], observations: list[_runtime.Observed]) -> None:
    dag = dag_file("dpone_half_hour_job", 1, half_hour_jobs.digests["measurements_async"],
                   half_hour_jobs.environments_dir)
    started = time.monotonic()
    dag_run = run_dag(dag, 1)
    elapsed = time.monotonic() - started
    assert dag_run.state == "success"
    ledger = half_hour_jobs.ledger()
    assert ledger["mutations_total"] == 1 and ledger["duplicate_mutations"] == 0
    # The job really ran for its half hour of receiver time: more than the worker budget of wall
    # time passed, observed by the trigger, so a task that polled in its worker would fail here.
    assert elapsed > JOB_SECONDS / SPEED_UP > WORKER_BUDGET_S
    assert len(observations) >= 2 and not observations[-1].observing
    assert [name for name, _ in worker_steps] == ["execute", "execute_complete"]
    worker_s = sum(seconds for _, seconds in worker_steps)
    figure = {"receiver_job_s": JOB_SECONDS, "receiver_clock_speed_up": SPEED_UP,
              "wall_s": round(elapsed, 3), "worker_s": round(worker_s, 3),
              "steps": [{"step": name, "s": round(s, 3)} for name, s in worker_steps],
              "trigger_observations": len(observations), "budget_s": WORKER_BUDGET_S}
    _ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (_ARTIFACTS / "airflow_worker_time.json").write_text(json.dumps(figure, indent=2) + "\n")
    print(f"worker time {worker_s:.3f} s for a {JOB_SECONDS / 60:.0f}-minute receiver job "
          f"({elapsed:.1f} s wall at {SPEED_UP:.0f}x), {len(observations)} trigger observations")
    assert worker_s <= WORKER_BUDGET_S
