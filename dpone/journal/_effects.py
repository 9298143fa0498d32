"""What a recorded effect implies beyond the tuple: the remote-job slot, the replacement
watermark, and whether a NONE_PROVEN tuple was proven by an operator reconciliation (so the same
delivery key may be submitted again). Shared by the journal's transactions."""

from __future__ import annotations

from dpone.contracts._axes import ExecutionState, RemoteEffect
from dpone.contracts.state import EvidenceName, ReconciliationStep, StateContract, StateTuple
from dpone.journal._fence import Interval, merge_watermark
from dpone.journal._rows import ChildRow, WatermarkRow
from dpone.journal._unit import UnitOfWork


def releases_capacity(target: StateTuple) -> bool:
    """RETRY_WAIT and FINALIZED tuples release the attempt's remote-job reservation.

    FINALIZED leaves no automatic delivery transition (an ELIGIBLE checkpoint only awaits
    promotion). A finalized UNKNOWN remote effect keeps its reservation: the receiver job may
    still run, so only reconciliation (or an audited operator transfer) frees it.
    """
    if target.execution_state is ExecutionState.RETRY_WAIT:
        return True
    return (target.execution_state is ExecutionState.FINALIZED
            and target.remote_effect is not RemoteEffect.UNKNOWN)


def records_watermark(target: StateTuple, mutation_kind: str) -> bool:
    """A fully applied replacement raises the domain's interval watermark."""
    return (mutation_kind == "partition_replace"
            and target.execution_state is ExecutionState.FINALIZED
            and target.remote_effect is RemoteEffect.FULLY_APPLIED)


def raise_watermark(tx: UnitOfWork, row: ChildRow) -> None:
    """Merge ``row``'s fully applied replacement into its domain's interval watermark."""
    domain, bounds = row.effect_conflict_domain, row.scope
    new = Interval(bounds, row.generation)
    removed = [WatermarkRow.decode(tx.codec, stored) for stored in tx.all(
        "remove_touching_watermarks", domain=domain, lo=bounds.lo, hi=bounds.hi)]
    origin = {mark.interval.generation: mark.operation_id for mark in removed}
    origin[new.generation] = row.operation_id
    for piece in merge_watermark([mark.interval for mark in removed], new):
        tx.run("insert_watermark", domain=domain, lo=piece.scope.lo, hi=piece.scope.hi,
               generation_end=piece.generation[0], correction_revision=piece.generation[1],
               operation_id=origin[piece.generation])


def absence_reconciled(tx: UnitOfWork, contract: StateContract, row: ChildRow) -> bool:
    """The stored tuple of ``row`` was recorded by an operator reconciliation that proved no
    effect (not by automatic verification): the audit rows of its revision say which."""
    for stored in tx.all("audit_transitions_at_revision", operation_id=row.operation_id,
                         revision=row.revision):
        listed = contract.transitions.get(str(stored["transition_id"]))
        if (listed is not None and listed.reconciliation is ReconciliationStep.RESOLVE
                and listed.trigger.evidence == EvidenceName.NO_EFFECT_PROVEN
                and listed.target == row.state_name):
            return True
    return False
