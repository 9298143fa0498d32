"""SQLite journal workers for the multi-process races (importable by spawned children)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _journal_support import ENVIRONMENT

from dpone.contracts import DponeError
from dpone.contracts.journal import AttemptPlan, Lease, ParentAdmission, TransitionRequest
from dpone.journal._core import marker_digest
from dpone.journal.sqlite import SqliteJournal


def _report(results: Any, index: int, call: Any) -> None:
    try:
        results.put((index, "ok", call()))
    except DponeError as error:
        results.put((index, "error", error.code))


def admit(path: Path, request: ParentAdmission, start: Any, results: Any, index: int) -> None:
    """Admit ``request`` once every racer is ready; report (resumed, parent_id)."""
    journal = SqliteJournal(path, environment_id=ENVIRONMENT)
    start.wait()

    def call() -> tuple[bool, str]:
        result = journal.admit_parent(request)
        return result.resumed, result.parent.parent_id

    _report(results, index, call)
    journal.close()


def cas(path: Path, request: TransitionRequest, lease: Lease, start: Any, results: Any,
        index: int) -> None:
    """Take one transition at the same expected revision as every other racer."""
    journal = SqliteJournal(path, environment_id=ENVIRONMENT)
    start.wait()
    _report(results, index, lambda: journal.transition(request, lease).revision)
    journal.close()


def enter(path: Path, plan: AttemptPlan, lease: Lease, revision: int, start: Any, results: Any,
          index: int) -> None:
    """Enter SUBMITTING for one child while the others race for the same domain's slots."""
    journal = SqliteJournal(path, environment_id=ENVIRONMENT)
    start.wait()
    _report(results, index, lambda: journal.enter_submitting(
        plan, marker_digest(plan.marker), lease, revision).state_name)
    journal.close()


def migrate(path: Path, start: Any, results: Any, index: int) -> None:
    """Migrate a brand-new file while another process does the same."""
    journal = SqliteJournal(path, environment_id=ENVIRONMENT)
    start.wait()
    _report(results, index, journal.migrate)
    journal.close()
