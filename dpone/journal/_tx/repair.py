"""Repair of an orphan remote-job reservation, by attempt id.

A reservation is an orphan when no live attempt holds it any more: its attempt is not the
child's current one, or the child left the holding states with a known effect. An UNKNOWN
remote effect keeps its slot: the receiver job may still run.
"""

from __future__ import annotations

from dpone.contracts._errors import DponeError
from dpone.journal._cas import audit
from dpone.journal._rows import ReservationRow
from dpone.journal._unit import UnitOfWork

HOLDING_EXECUTION = frozenset({"SUBMITTING", "ACCEPTED", "WAITING", "VERIFYING"})


def repair_reservation(tx: UnitOfWork, attempt_id: str, actor: str) -> bool:
    """Release the reservation of ``attempt_id`` when no live attempt holds it any more."""
    stored = tx.one("get_reservation", attempt_id=attempt_id)
    if stored is None:
        raise DponeError(code="journal.not_found",
                         message=f"no capacity reservation for attempt {attempt_id}")
    row = ReservationRow.decode(stored)
    if row.released:
        return False
    holds = (row.attempt_ordinal is not None
             and row.attempt_ordinal == row.current_attempt
             and (row.execution_state in HOLDING_EXECUTION or row.remote_effect == "UNKNOWN"))
    if holds:
        return False
    tx.run("release_reservation", attempt_id=attempt_id, reason="repair_orphan")
    audit(tx, operation_id=row.operation_id, actor=actor, transition_id="capacity_repair",
          from_state=None, to_state=None, revision=None, digests={"attempt_id": attempt_id})
    return True
