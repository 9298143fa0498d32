"""Race scenarios shared by both journal dialects: the same assertions over any adapter.

``locator`` is what a spawned worker needs to open the same journal (a DSN or a file path);
``race(target, per_racer)`` runs ``RACERS`` spawned workers and returns their outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpone.contracts.journal import DeliveryJournalPort, TransitionRequest
from support import journal_race_worker as worker
from support.journal import admission

RACERS = 8
Race = Callable[[Callable[..., None], Callable[[int], tuple[Any, ...]]], list[Any]]


def cas_has_one_winner(journal: DeliveryJournalPort, locator: Any, race: Race) -> None:
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 120)
    request = TransitionRequest(operation_id=child.operation_id,
                                transition_id="sealed_pre_submit_fence_refused",
                                expected_revision=child.revision, facts=("no_request_sent",))
    outcomes = race(worker.cas, lambda _i: (locator, request, lease))
    statuses = [(status, value) for _i, status, value in outcomes]
    assert statuses.count(("ok", child.revision + 1)) == 1
    assert statuses.count(("error", "journal.revision_conflict")) == RACERS - 1
    assert journal.get_child(child.operation_id).revision == child.revision + 1


def capacity_is_never_exceeded(journal: DeliveryJournalPort, locator: Any, race: Race) -> None:
    scopes = [(n * 3, n * 3 + 3) for n in range(RACERS)]
    parent = journal.admit_parent(admission(scopes, max_remote_jobs=2)).parent
    prepared = []
    for child in parent.children:
        lease = journal.acquire_lease(child.operation_id, "mutation", f"worker-{child.ordinal}",
                                      120)
        prepared.append((journal.plan_attempt(child.operation_id, lease), lease, child.revision))
    outcomes = race(worker.enter, lambda i: (locator, *prepared[i]))
    statuses = [(status, value) for _i, status, value in outcomes]
    assert statuses.count(("ok", "submitting")) == 2
    assert statuses.count(("error", "journal.capacity_exhausted")) == RACERS - 2
    states = [journal.get_child(c.operation_id).state_name for c in parent.children]
    assert states.count("submitting") == 2
