"""Journal workers for the multi-process races, one set for every adapter.

Each worker opens its own journal (``adapter`` names which: a PostgreSQL DSN or a SQLite file
path is the ``location``), waits at the barrier and reports ``(index, "ok", value)`` or
``(index, "error", code)``. The module is importable by spawned children; ``race`` starts them.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpone.contracts import DponeError
from dpone.contracts.journal import (
    AttemptPlan,
    DeliveryJournalPort,
    Lease,
    ParentAdmission,
    TransitionRequest,
)
from dpone.journal._marker import marker_digest
from dpone.journal.postgres import PostgresJournal
from dpone.journal.sqlite import SqliteJournal
from support.journal import ENVIRONMENT


def race(target: Callable[..., None], adapter: str, racers: int,
         per_racer: Callable[[int], tuple[Any, ...]]) -> list[Any]:
    """Run ``racers`` spawned (never forked) processes of ``target`` released by one barrier."""
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(racers)
    results = context.Queue()
    processes = [context.Process(target=target,
                                 args=(adapter, *per_racer(i), start, results, i))
                 for i in range(racers)]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    return sorted(outcomes)


def _open(adapter: str, location: str | Path) -> DeliveryJournalPort:
    if adapter == "postgres":
        return PostgresJournal(str(location), environment_id=ENVIRONMENT)
    if adapter == "sqlite":
        return SqliteJournal(location, environment_id=ENVIRONMENT)
    raise ValueError(f"unknown journal adapter {adapter!r}")


def _report(results: Any, index: int, call: Any) -> None:
    try:
        results.put((index, "ok", call()))
    except DponeError as error:
        results.put((index, "error", error.code))


def _run(adapter: str, location: str | Path, start: Any, results: Any, index: int,
         call: Callable[[Any], Any]) -> None:
    journal: Any = _open(adapter, location)
    start.wait()
    _report(results, index, lambda: call(journal))
    journal.close()


def admit(adapter: str, location: str | Path, request: ParentAdmission, start: Any,
          results: Any, index: int) -> None:
    """Admit ``request`` once every racer is ready; report (resumed, parent_id)."""

    def call(journal: DeliveryJournalPort) -> tuple[bool, str]:
        result = journal.admit_parent(request)
        return result.resumed, result.parent.parent_id

    _run(adapter, location, start, results, index, call)


def cas(adapter: str, location: str | Path, request: TransitionRequest, lease: Lease,
        start: Any, results: Any, index: int) -> None:
    """Take one transition at the same expected revision as every other racer."""
    _run(adapter, location, start, results, index,
         lambda journal: journal.transition(request, lease).revision)


def enter(adapter: str, location: str | Path, plan: AttemptPlan, lease: Lease, revision: int,
          start: Any, results: Any, index: int) -> None:
    """Enter SUBMITTING for one child while the others race for the same domain's slots."""
    _run(adapter, location, start, results, index, lambda journal: journal.enter_submitting(
        plan, marker_digest(plan.marker), lease, revision).state_name)


def migrate(adapter: str, location: str | Path, start: Any, results: Any, index: int) -> None:
    """Apply the migrations to a fresh store while the other racers do the same."""
    _run(adapter, location, start, results, index, lambda journal: journal.migrate())
