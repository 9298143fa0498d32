"""The receipt trigger as the real triggerer sees it: rebuilt from its serialized classpath and
JSON kwargs in another process, with the dpone runtime imported lazily; a duplicate trigger is
harmless."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from conftest import ENVIRONMENT, TOKEN, Published, dag_file
from dpone_airflow._locator import resolve
from dpone_airflow.triggers import DeliveryReceiptTrigger

_CHILD = "op_v1_" + "ab" * 32 + "_0001"
_LOCATOR: dict[str, str | int | None] = {
    "environment": ENVIRONMENT, "environment_id": "env", "tier": "development",
    "journal": "sqlite:///unused.db", "artifacts": "file:///unused", "lease_ttl_s": 30,
    "lease_heartbeat_s": None}


@pytest.mark.smoke
def test_the_trigger_is_rebuilt_from_its_classpath_in_a_fresh_interpreter(
        published: Published) -> None:
    locator = resolve(ENVIRONMENT, published.environments_dir)
    classpath, kwargs = DeliveryReceiptTrigger(_CHILD, locator.as_kwargs()).serialize()
    document = json.dumps({"classpath": classpath, "kwargs": kwargs})
    assert TOKEN not in document and "password" not in document
    assert set(kwargs) == {"operation_id", "journal_locator", "step_timeout_s", "max_sleep_s",
                           "traceparent"}
    script = (
        "import importlib, json, sys\n"
        "given = json.loads(sys.argv[1])\n"
        "module, _, name = given['classpath'].rpartition('.')\n"
        "trigger = getattr(importlib.import_module(module), name)(**given['kwargs'])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('dpone.'))\n"
        "print(json.dumps({'serialized': list(trigger.serialize()), 'loaded': loaded}))\n")
    done = subprocess.run([sys.executable, "-c", script, document], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["serialized"] == [classpath, kwargs]
    # Importing the trigger loads none of the dpone runtime: it comes lazily, off the loop.
    assert not [m for m in answer["loaded"] if m.startswith(("dpone.executor", "dpone.journal"))]


def test_a_duplicate_trigger_of_a_finished_child_sends_nothing(
        published: Published, run_dag: Callable[[Any, int], Any]) -> None:
    dag = dag_file("dpone_async_dup", 1, published.digests["measurements_async"],
                   published.environments_dir)
    dag_run = run_dag(dag, 1)
    assert dag_run.state == "success"
    child = dag_run.get_task_instances()[0].xcom_pull(task_ids="deliver")["children"][0]
    before = published.ledger()
    locator = resolve(ENVIRONMENT, published.environments_dir)

    async def twice() -> list[Any]:
        triggers = [DeliveryReceiptTrigger(child["operation_id"], locator.as_kwargs())
                    for _ in range(2)]
        return [await anext(trigger.run()) for trigger in triggers]

    events = asyncio.run(twice())
    assert events[0].payload == events[1].payload
    assert events[0].payload["operation_id"] == child["operation_id"]
    assert isinstance(events[0].payload["observed_revision"], int)
    assert published.ledger()["requests"] == before["requests"]


def test_a_trigger_cancelled_as_its_step_finishes_stops_polling(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The triggerer may cancel a trigger at any moment, also just as an observation step comes
    back from its thread: the trigger must stop there, not go on polling (the cancellation is
    queued behind the step's completion on the event loop, the race that loses it)."""
    from dpone_airflow import _runtime  # noqa: PLC0415 - the provider is under test

    steps: list[int] = []

    async def cancelled_once() -> bool:
        loop = asyncio.get_running_loop()
        task: list[asyncio.Task[Any]] = []

        def observe(locator: Any, operation_id: str, quiet: Any = None) -> _runtime.Observed:
            steps.append(1)
            # Cancel one loop turn after the step's result is handed back to the loop.
            loop.call_soon_threadsafe(loop.call_soon, task[0].cancel)
            return _runtime.Observed(operation_id, "accepted", 3, True, None)

        monkeypatch.setattr(_runtime, "observe_once", observe)
        trigger = DeliveryReceiptTrigger(_CHILD, _LOCATOR, max_sleep_s=0.01)
        task.append(asyncio.ensure_future(anext(trigger.run())))
        try:
            await task[0]
        except asyncio.CancelledError:
            return True
        return False

    for _ in range(20):
        steps.clear()
        assert asyncio.run(cancelled_once()), "the cancellation was lost"
        assert steps == [1]
