"""Recovery from Airflow's failures, against the mock receiver's ledger: a worker lost after the
submit and the task retried, the triggerer restarted mid-poll, one child observed by two
triggers at once, and the whole submit -> defer -> trigger -> complete path on a PostgreSQL
journal. In every scenario each delivery key is mutated once and no mutation is duplicated.

The operator runs in this process (``execute`` / ``execute_complete`` called as the worker calls
them); the trigger is rebuilt from its serialized classpath and kwargs, as the triggerer does.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ENVIRONMENT, FIRST_DAY, Published
from dpone_airflow import _runtime
from dpone_airflow._locator import resolve
from dpone_airflow.operators import DponeDeliveryOperator
from dpone_airflow.triggers import DeliveryReceiptTrigger

try:
    from airflow.sdk.exceptions import TaskDeferred
except ImportError:  # Airflow 2
    from airflow.exceptions import TaskDeferred

_CONTEXT = {"data_interval_start": FIRST_DAY, "data_interval_end": FIRST_DAY + dt.timedelta(days=1)}


class WorkerKilled(BaseException):
    """The worker process dies (not an error the task could handle)."""


def _operator(published: Published, task_id: str = "deliver") -> DponeDeliveryOperator:
    return DponeDeliveryOperator(task_id=task_id,
                                 plan_digest=published.digests["measurements_async"],
                                 environment=ENVIRONMENT,
                                 environments_dir=published.environments_dir)


def _deferred(operator: DponeDeliveryOperator) -> DeliveryReceiptTrigger:
    """``execute`` until it defers: the trigger it handed to Airflow."""
    with pytest.raises(TaskDeferred) as deferred:
        operator.execute(_CONTEXT)
    trigger = deferred.value.trigger
    assert isinstance(trigger, DeliveryReceiptTrigger)
    assert deferred.value.method_name == "execute_complete"
    return trigger


def _rebuilt(trigger: DeliveryReceiptTrigger) -> DeliveryReceiptTrigger:
    """The trigger as the triggerer builds it: its classpath imported, its kwargs passed."""
    classpath, kwargs = trigger.serialize()
    module, _, name = classpath.rpartition(".")
    rebuilt = getattr(importlib.import_module(module), name)(**kwargs)
    assert isinstance(rebuilt, DeliveryReceiptTrigger)
    return rebuilt


async def _events(trigger: DeliveryReceiptTrigger) -> list[Any]:
    return [event async for event in trigger.run()]


def _one_mutation_per_key(published: Published, keys: int = 1) -> None:
    ledger = published.ledger()
    assert ledger["mutations_total"] == keys
    assert ledger["duplicate_mutations"] == 0
    assert published.posts() == keys


def _recorded_observations(published: Published, operation_id: str) -> list[dict[str, Any]]:
    locator = resolve(ENVIRONMENT, published.environments_dir)
    journal = _runtime.open_journal(locator, migrate=False)
    try:
        return [dict(row) for row in journal.list_observations(operation_id)]
    finally:
        close = getattr(journal, "close", None)
        if close is not None:
            close()


def _complete(operator: DponeDeliveryOperator, events: list[Any]) -> dict[str, Any]:
    (event,) = events
    result = operator.execute_complete(_CONTEXT, event.payload)
    assert isinstance(result, dict)
    return result


def test_a_worker_lost_after_the_submit_is_retried_without_a_second_mutation(
        published: Published, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first try submits (the receiver accepted the job) and its worker dies before the task
    defers; the retry resumes the admitted delivery and defers on the same child's receipt."""
    handed: list[str] = []
    real_defer = DponeDeliveryOperator.defer

    def killed(self: DponeDeliveryOperator, *, trigger: DeliveryReceiptTrigger,
               **kwargs: Any) -> None:
        handed.append(trigger.operation_id)
        raise WorkerKilled

    monkeypatch.setattr(DponeDeliveryOperator, "defer", killed)
    with pytest.raises(WorkerKilled):
        _operator(published).execute(_CONTEXT)
    assert published.posts() == 1  # the submit reached the receiver

    monkeypatch.setattr(DponeDeliveryOperator, "defer", real_defer)
    retry = _operator(published)
    trigger = _deferred(retry)
    assert trigger.operation_id == handed[0]  # the same admitted child, not a new delivery
    result = _complete(retry, asyncio.run(_events(_rebuilt(trigger))))
    assert result["kind"] == "completed" and result["checkpoint_frontier"] == 1
    _one_mutation_per_key(published)


def test_a_triggerer_restarted_mid_poll_resumes_from_the_serialized_trigger(
        published: Published, observations: list[_runtime.Observed]) -> None:
    operator = _operator(published)
    trigger = _deferred(operator)

    async def restart() -> list[Any]:
        first = asyncio.create_task(_events(_rebuilt(trigger)))
        while not observations and not first.done():
            await asyncio.sleep(0.01)
        first.cancel()  # the triggerer stops after the first observation
        with pytest.raises(asyncio.CancelledError):
            await first
        assert len(observations) == 1 and observations[0].observing  # the job still ran
        return await _events(_rebuilt(trigger))  # another triggerer takes the trigger over

    events = asyncio.run(restart())
    assert len(events) == 1
    assert events[0].payload["operation_id"] == trigger.operation_id
    assert not observations[-1].observing
    result = _complete(operator, events)
    assert result["kind"] == "completed" and result["checkpoint_frontier"] == 1
    _one_mutation_per_key(published)


def test_two_triggers_observing_one_child_at_once_are_harmless(
        published: Published, observations: list[_runtime.Observed]) -> None:
    operator = _operator(published)
    trigger = _deferred(operator)

    async def both() -> list[list[Any]]:
        return list(await asyncio.gather(_events(_rebuilt(trigger)), _events(_rebuilt(trigger))))

    first, second = asyncio.run(both())
    assert len(first) == 1 and len(second) == 1
    for events in (first, second):
        assert events[0].payload["operation_id"] == trigger.operation_id
    # Each recorded observation advanced the child by one revision (the CAS let one poll record).
    recorded = _recorded_observations(published, trigger.operation_id)
    assert recorded
    revisions = [row["revision"] for row in recorded]
    assert len(revisions) == len(set(revisions))
    gets = sum(n for line, n in published.ledger()["requests"].items() if line.startswith("GET "))
    assert len(recorded) <= gets
    result = _complete(operator, first)
    assert result["kind"] == "completed"
    _complete(operator, second)  # the second event rereads the journal: already completed
    _one_mutation_per_key(published)


_TESTS = Path(__file__).resolve().parents[2] / "tests"


@pytest.fixture(scope="module")
def postgres_dsn() -> Iterator[str]:
    """A throwaway PostgreSQL cluster (the repository's helper, needs the server binaries)."""
    sys.path.insert(0, str(_TESTS))
    try:
        from support.postgres_cluster import ThrowawayCluster, find_bindir  # noqa: PLC0415
    finally:
        sys.path.remove(str(_TESTS))
    try:
        find_bindir()
    except RuntimeError as missing:
        pytest.skip(str(missing))
    with ThrowawayCluster(fsync=False) as cluster:
        yield cluster.dsn


def test_the_deferred_path_on_a_postgresql_journal(
        published: Published, postgres_dsn: str, observations: list[_runtime.Observed]) -> None:
    environment = Path(published.environments_dir) / f"{ENVIRONMENT}.yaml"
    text = environment.read_text(encoding="utf-8")
    environment.write_text(re.sub(r"^  journal: .*$", f"  journal: {postgres_dsn}", text,
                                  flags=re.M), encoding="utf-8")
    assert resolve(ENVIRONMENT, published.environments_dir).journal == postgres_dsn
    operator = _operator(published)
    trigger = _deferred(operator)
    assert trigger.journal_locator["journal"] == postgres_dsn
    events = asyncio.run(_events(_rebuilt(trigger)))
    assert observations and not observations[-1].observing
    result = _complete(operator, events)
    assert result["kind"] == "completed" and result["checkpoint_frontier"] == 1
    assert not published.journal.exists()  # nothing went to a SQLite file
    assert _recorded_observations(published, trigger.operation_id)
    _one_mutation_per_key(published)
