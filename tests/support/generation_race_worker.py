"""Spawn-pool workers for the generation races (importable by spawned children).

Each pool process opens one ``PostgresJournal`` in its initializer and keeps it for the pool's
life. ``deliver`` drives one parent through the public port exactly as a runtime would, up to
and including the pre-submit critical transaction: admit the parent, take the child's mutation
lease, plan the attempt, bind the marker digest (``canonical_json(marker)``, nothing is
published) and enter SUBMITTING. Every racer first waits at a shared barrier.
"""

from __future__ import annotations

import time
from multiprocessing import util
from typing import Any

from dpone.contracts import DponeError, canonical_json, content_digest
from dpone.contracts.journal import DeliveryJournalPort, ParentAdmission
from dpone.journal.postgres import PostgresJournal
from support.journal import ENVIRONMENT

POOL_SIZE = 6
"""At least the largest number of racers, so every racer holds its own process at the barrier."""

_journal: DeliveryJournalPort | None = None


def open_journal(dsn: str) -> None:
    """Pool initializer: one journal per worker process, closed when the worker exits."""
    global _journal  # noqa: PLW0603 - one journal per spawned worker process
    journal = PostgresJournal(dsn, environment_id=ENVIRONMENT)
    _journal = journal
    util.Finalize(None, journal.close, exitpriority=10)


def deliver(index: int, request: ParentAdmission, start: Any, admit_delay_ms: float,
            stagger_ms: float) -> dict[str, Any]:
    """Admit ``request`` and take its single child into SUBMITTING; report every outcome.

    ``admit_delay_ms`` (after the barrier) and ``stagger_ms`` (before the pre-submit
    transaction) spread the racers so that every interleaving of admissions and submits occurs.
    """
    journal = _journal
    assert journal is not None, "the pool initializer did not run"
    outcome: dict[str, Any] = {"index": index, "parent_id": None, "operation_id": None,
                               "admit": None, "submit": None}
    start.wait(timeout=60)
    if admit_delay_ms:
        time.sleep(admit_delay_ms / 1000)
    try:
        parent = journal.admit_parent(request).parent
    except DponeError as error:
        outcome["admit"] = ("error", error.code)
        return outcome
    child = parent.children[0]
    outcome.update(parent_id=parent.parent_id, operation_id=child.operation_id,
                   admit=("ok", child.state_name))
    lease = journal.acquire_lease(child.operation_id, "mutation", f"racer-{index}", 120)
    plan = journal.plan_attempt(child.operation_id, lease)
    digest = content_digest(canonical_json(dict(plan.marker)))
    if stagger_ms:
        time.sleep(stagger_ms / 1000)
    try:
        entered = journal.enter_submitting(plan, digest, lease, child.revision)
    except DponeError as error:
        outcome["submit"] = ("error", error.code)
    else:
        outcome["submit"] = ("ok", entered.state_name)
    return outcome
