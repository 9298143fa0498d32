"""Checkpoint promotion: extend the contiguous frontier of one parent, under a checkpoint lease.

Children are read after the frontier in ordinal order, a batch at a time (a small one first:
a run usually promotes the one child it has just verified; the batches grow while every child
read is promoted); each checkpoint-ready
child is promoted by the contract's checkpoint transition from its state, and the frontier
stops at the first child that is not ready. A child skipped as empty input (no rows, no
attempt, no error) holds nothing to promote and the frontier passes over it.
"""

from __future__ import annotations

from dpone.contracts._axes import CheckpointState
from dpone.contracts.journal import Lease, empty_input_outcome
from dpone.contracts.state import Fact, StateContract, TriggerKind
from dpone.journal._cas import apply_decision, guarded
from dpone.journal._environment import environment
from dpone.journal._leases import check_lease_identity, granted_epoch
from dpone.journal._lookup import children, require_parent
from dpone.journal._rows import ChildRow
from dpone.journal._unit import UnitOfWork

PROMOTION_BATCH = 64
"""At most this many children are read per step of a promotion: only those after the frontier,
in ordinal order."""
FIRST_PROMOTION_BATCH = 2
"""The first step reads the next child and the one after it."""
PROMOTION_FACTS = (Fact.CONTIGUOUS_FRONTIER,)
"""What promotion proves: the child is next to the frontier, every child before it promoted."""


def promote_transition(contract: StateContract, state_name: str) -> str | None:
    """The checkpoint transition that promotes a child in ``state_name``, if any."""
    for transition in contract.outgoing(state_name):
        if transition.trigger.kind is TriggerKind.CHECKPOINT:
            return transition.id
    return None


def _skipped_empty(child: ChildRow) -> bool:
    """Skipped as empty input: nothing to promote, so the frontier passes over it."""
    return empty_input_outcome(child.state_name, child.row_count, child.attempt_ordinal,
                               child.last_error_code, child.state.remote_effect) == "skipped"


def _promote_run(tx: UnitOfWork, contract: StateContract, batch: list[ChildRow],
                 frontier: int, lease: Lease, lease_epoch: int, epoch: int) -> int:
    """Promote the checkpoint-ready prefix of ``batch``; returns the new frontier."""
    for child in batch:
        if child.ordinal != frontier + 1:
            break
        if child.state.checkpoint_state is not CheckpointState.PROMOTED and not _skipped_empty(child):
            transition_id = promote_transition(contract, child.state_name)
            if transition_id is None:
                break
            decision = guarded(contract, child, transition_id, expected_revision=child.revision,
                               lease_kind="checkpoint", lease_epoch=lease_epoch,
                               current_epoch=epoch, facts=PROMOTION_FACTS)
            apply_decision(tx, contract, child, decision, expected_revision=child.revision,
                           epoch=epoch, actor=lease.holder)
        frontier = child.ordinal
    return frontier


def promote(tx: UnitOfWork, contract: StateContract, parent_id: str, lease: Lease, *,
            taken_epoch: int | None = None) -> int:
    """Promote the contiguous run of checkpoint-ready children after the frontier.

    ``taken_epoch``: this transaction took ``lease`` itself under that journal epoch.
    """
    check_lease_identity(lease, parent_id, {"checkpoint"})
    lease_epoch = granted_epoch(tx, lease, taken_epoch)
    epoch = taken_epoch if taken_epoch is not None else environment(tx).journal_epoch
    frontier = require_parent(tx, parent_id, lock=True).checkpoint_frontier
    size = FIRST_PROMOTION_BATCH
    while True:
        batch = children(tx, "children_after_frontier", parent_id=parent_id, frontier=frontier,
                         batch=size)
        advanced = _promote_run(tx, contract, batch, frontier, lease, lease_epoch, epoch)
        whole_batch = advanced == frontier + len(batch) == frontier + size
        frontier = advanced
        if not whole_batch:
            break
        size = min(size * 8, PROMOTION_BATCH)
    tx.run("advance_frontier", parent_id=parent_id, frontier=frontier)
    return frontier
