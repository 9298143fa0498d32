"""The opening read of a transaction under a held lease (``_opening.read_opening``), on every
journal: one statement gives what ``get_environment``, ``check_lease``,
``get_child`` and ``latest_attempt`` give one by one, in every case the callers check (no lease,
a lease of another kind, no child, no attempt yet, an attempt entered, an expired lease)."""

from __future__ import annotations

import time
from typing import cast

from dpone.contracts.journal import DeliveryJournalPort
from dpone.journal._environment import environment
from dpone.journal._opening import Opening, read_opening
from dpone.journal._port import JournalBase
from dpone.journal._rows import AttemptRow, ChildRow, LeaseRow
from dpone.journal._unit import UnitOfWork
from support.journal import admission, submit


def _separately(tx: UnitOfWork, operation_id: str, kind: str) -> Opening:
    lease = tx.one("check_lease", operation_id=operation_id, kind=kind)
    attempt = tx.one("latest_attempt", operation_id=operation_id)
    child = tx.one("get_child", operation_id=operation_id)
    return Opening(environment=environment(tx),
                   child=None if child is None else ChildRow.decode(tx.codec, child),
                   lease=None if lease is None else LeaseRow.decode(lease),
                   attempt=None if attempt is None else AttemptRow.decode(attempt))


def _both(journal: DeliveryJournalPort, operation_id: str,
          kind: str) -> tuple[Opening, Opening]:
    port = cast(JournalBase, journal)

    def work(tx: UnitOfWork) -> tuple[Opening, Opening]:
        return (read_opening(tx, operation_id, kind),
                _separately(tx, operation_id, kind))

    return port._run(work, "read")


def test_the_opening_read_gives_what_the_separate_reads_give(
        journal: DeliveryJournalPort) -> None:
    children = journal.admit_parent(admission([(0, 10), (10, 20)])).parent.children
    first, second = (child.operation_id for child in children)
    # A child with no lease and no attempt; then its mutation lease; then an entered attempt.
    opened, separate = _both(journal, first, "mutation")
    assert opened == separate and opened.lease is None and opened.attempt is None
    assert opened.child is not None and opened.child.operation_id == first
    lease = journal.acquire_lease(first, "mutation", "worker-1", 60)
    opened, separate = _both(journal, first, "mutation")
    assert opened == separate
    assert opened.lease is not None and (opened.lease.holder, opened.lease.token) == (
        "worker-1", lease.token) and opened.lease.live
    assert _both(journal, first, "observation")[0].lease is None  # another kind
    child, _ = submit(journal, first, lease=lease)
    opened, separate = _both(journal, first, "mutation")
    assert opened == separate and opened.child is not None
    assert opened.attempt is not None and opened.attempt.attempt_ordinal == 1
    assert (opened.attempt.lease_holder, opened.attempt.lease_token) == ("worker-1", lease.token)
    assert opened.child.revision == child.revision
    # Another child's lease and attempt are not this one's.
    opened, separate = _both(journal, second, "mutation")
    assert opened == separate and opened.lease is None and opened.attempt is None
    # A child that does not exist: the environment and nothing else.
    opened, separate = _both(journal, "op-missing", "mutation")
    assert opened == separate and (opened.child, opened.lease, opened.attempt) == (
        None, None, None)
    assert opened.environment.mutation_gate == "OPEN"


def test_an_expired_lease_is_read_as_not_live(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    journal.acquire_lease(operation_id, "mutation", "worker-1", 1)
    time.sleep(2.2)  # past the TTL by the database clock (second resolution on SQLite)
    opened, separate = _both(journal, operation_id, "mutation")
    assert opened == separate and opened.lease is not None and not opened.lease.live
