"""Remote-job capacity: each attempt holds one of its effect domain's numbered slots.

A domain never has more attempts holding a slot than its parent's ``max_remote_jobs``. A slot
is released when the attempt's child reaches RETRY_WAIT or a terminal tuple with a known
effect; an orphan reservation is repaired by attempt id (``_tx.repair``).
"""

from __future__ import annotations

from dpone.contracts._axes import ExecutionState
from dpone.contracts._errors import DponeError
from dpone.contracts.journal import AttemptPlan
from dpone.journal._lookup import require_child
from dpone.journal._rows import ChildRow, SlotRow
from dpone.journal._unit import UnitOfWork


def reserve(tx: UnitOfWork, row: ChildRow, attempt: AttemptPlan, limit: int) -> None:
    """Take the lowest free of the domain's ``limit`` remote-job slots (the parent's
    ``max_remote_jobs``), or refuse: capacity exhausted."""
    domain = row.effect_conflict_domain
    held = [SlotRow.decode(slot) for slot in tx.all("active_slots", domain=domain)]
    taken = {slot.slot for slot in held}
    free = [slot for slot in range(1, limit + 1) if slot not in taken]
    if not free:
        holders = [require_child(tx, slot.operation_id) for slot in held]
        settled = [h for h in holders if h.state.execution_state is ExecutionState.FINALIZED]
        if settled and len(settled) == len(holders):
            # Nothing will release these slots on its own: an unresolved effect in the domain.
            raise DponeError(code="REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT",
                             operation_id=row.operation_id,
                             message=f"the effect domain's remote-job slots are held by "
                             f"{settled[0].operation_id} whose remote effect is "
                             f"{settled[0].state.remote_effect}: reconcile it before any "
                             "further mutation in this domain",
                             details={"holders": [h.operation_id for h in settled],
                                      "conflicting_operation_id": settled[0].operation_id})
        raise DponeError(code="journal.capacity_exhausted", operation_id=row.operation_id,
                         message=f"all {limit} remote-job slots of the effect domain are held")
    tx.run("reserve_slot", attempt_id=attempt.attempt_id, operation_id=row.operation_id,
           domain=domain, slot=free[0])
