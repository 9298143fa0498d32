"""The reads that open a transaction under a held lease, in one statement.

A transaction that relies on a held lease first reads the environment row (journal epoch,
mutation gate), the lease as it is stored (live by the database clock), the child and the
child's latest attempt. ``opening_read`` returns the four in one round trip, and each is then
checked exactly as its own read would be: :func:`~._leases.held_lease` for the lease,
:func:`~._lookup.present_child` for the child, :func:`~._leases.check_submit_holder` for the
attempt. A transaction that must hold the environment row against a gate change reads it
again with ``environment(tx, lock="share")``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpone.contracts._errors import DponeError
from dpone.journal._environment import environment, remember
from dpone.journal._rows import AttemptRow, ChildRow, EnvironmentRow, LeaseRow
from dpone.journal._unit import UnitOfWork


@dataclass(frozen=True, slots=True)
class Opening:
    """What ``opening_read`` found: None where there is no lease, child or attempt."""

    environment: EnvironmentRow
    lease: LeaseRow | None
    child: ChildRow | None
    attempt: AttemptRow | None


def read_opening(tx: UnitOfWork, operation_id: str, kind: str) -> Opening:
    """The environment row, the stored ``kind`` lease on ``operation_id``, the child and its
    latest attempt, read together."""
    row = tx.one("opening_read", operation_id=operation_id, kind=kind)
    if row is None:  # the first transaction of this environment creates its row
        environment(tx)
        row = tx.one("opening_read", operation_id=operation_id, kind=kind)
    if row is None:
        raise DponeError(code="journal.unavailable", message="the environment row is missing")
    current = EnvironmentRow(journal_epoch=int(row["o_env_journal_epoch"]),
                             mutation_gate=str(row["o_env_mutation_gate"]))
    remember(tx, current)
    # A joined row that is missing leaves its NOT NULL key column NULL.
    return Opening(
        environment=current,
        lease=None if row["o_lease_holder"] is None else LeaseRow.decode(row, "o_lease_"),
        child=None if row["operation_id"] is None else ChildRow.decode(tx.codec, row),
        attempt=(None if row["o_attempt_attempt_id"] is None
                 else AttemptRow.decode(row, "o_attempt_")))
