"""A guarded transition requested by the supervisor (or an operator), in one transaction.

``transition`` runs the runtime guard over the stored tuple and commits with a revision CAS;
in the same transaction it appends the bounded observation, records the attempt outcome,
releases capacity in RETRY_WAIT and terminal tuples, and raises the domain's interval
watermark for a fully applied replacement (``_fence.merge_watermark``) while the effect domain
is held (taken before the CAS, so every path holds the domain before the child). The caller
names the transition and proves its facts; the trigger comes from the contract.
"""

from __future__ import annotations

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import ChildOperation, Lease, LeaseClaim, TransitionRequest
from dpone.contracts.state import Fact, ListedTransition, StateContract, StateName
from dpone.journal._cas import apply_decision, guarded
from dpone.journal._effects import raise_watermark, records_watermark, releases_capacity
from dpone.journal._leases import (
    UNREAD,
    Unread,
    check_lease_identity,
    check_submit_holder,
    held_lease,
    holding,
    release,
)
from dpone.journal._lookup import (
    fence_refusal,
    present_child,
    prior_reconciliation,
    require_child,
)
from dpone.journal._models import child_model
from dpone.journal._opening import read_opening
from dpone.journal._rows import AttemptRow, ChildRow
from dpone.journal._unit import UnitOfWork

MAX_OBSERVATIONS_PER_OPERATION = 64
"""Verbose observations kept per operation; older ones are pruned (the receipt stays)."""
WITHOUT_ROWS = Fact.SEALED_WITHOUT_ROWS
"""The guard fact of finalizing an empty child without a request: the journal proves it."""


def _check_empty_input(tx: UnitOfWork, row: ChildRow, listed: ListedTransition) -> None:
    """An empty child finalized without a request: the journal checks what the caller asserts.

    The child holds no rows and never entered SUBMITTING; one that claims a full effect
    (``empty_input: promote``) is an append (replacing a window with nothing deletes the
    receiver's rows there: only a request does that) and passes the pre-submit overlap fence
    under the domain lock, so a stale generation is never recorded as applied.
    """
    if row.row_count != 0 or row.attempt_ordinal != 0:
        raise DponeError(code="journal.illegal_transition", operation_id=row.operation_id,
                         message=f"{listed.id}: the child holds {row.row_count} sealed row(s) "
                         f"and {row.attempt_ordinal} attempt(s); only a child without rows "
                         "is finalized without a request")
    if listed.target == StateName.FINAL_NOT_STARTED:
        return
    if row.mutation_kind != "incremental_append":
        raise DponeError(code="journal.illegal_transition", operation_id=row.operation_id,
                         message=f"{listed.id}: a {row.mutation_kind} child without rows "
                         "replaces its window with nothing at the receiver; it is submitted, "
                         "never verified without a request")
    tx.lock_domains([row.effect_conflict_domain])
    refusal = fence_refusal(tx, row)
    if refusal is not None:
        raise refusal


def transition(tx: UnitOfWork, contract: StateContract, request: TransitionRequest,
               lease: Lease, *, taken_epoch: int | None = None) -> ChildOperation:
    """``taken_epoch``: this transaction took ``lease`` itself under that journal epoch."""
    return child_model(_transitioned(tx, contract, request, lease, taken_epoch=taken_epoch))


def _transitioned(tx: UnitOfWork, contract: StateContract, request: TransitionRequest,
                  lease: Lease, *, taken_epoch: int | None = None,
                  written: ChildRow | None = None) -> ChildRow:
    """The transition's stored row. ``written``: the row this transaction's previous CAS
    returned (current while the transaction lasts), instead of reading it again."""
    check_lease_identity(lease, request.operation_id, {lease.kind})
    latest: AttemptRow | Unread | None = UNREAD
    stored: ChildRow | None = None
    if taken_epoch is None:  # the held lease, the environment and the child in one read
        opened = read_opening(tx, request.operation_id, lease.kind)
        lease_epoch = held_lease(lease, opened.lease).journal_epoch
        epoch = opened.environment.journal_epoch
        stored, latest = opened.child, opened.attempt
    else:
        lease_epoch = epoch = taken_epoch
    listed = contract.transitions.get(request.transition_id)
    if listed is not None and "attempt_ordinal" in listed.advances:
        raise DponeError(code="journal.illegal_transition", operation_id=request.operation_id,
                         message=f"{request.transition_id} enters SUBMITTING: use "
                         "plan_attempt and enter_submitting")
    if written is not None and written.operation_id == request.operation_id:
        row = written
    elif taken_epoch is None:
        row = present_child(request.operation_id, stored)
    else:
        row = require_child(tx, request.operation_id)
    if (listed is not None
            and records_watermark(contract.tuples[listed.target], row.mutation_kind)
            and tx.lock_domains([row.effect_conflict_domain])):
        row, latest = require_child(tx, request.operation_id), UNREAD
    check_submit_holder(tx, row, lease, latest)
    if listed is not None and WITHOUT_ROWS in listed.requires:
        _check_empty_input(tx, row, listed)
    prior_ids, prior_digests = (prior_reconciliation(tx, request.operation_id)
                                if listed is not None and listed.reconciliation is not None
                                else (set(), set()))
    decision = guarded(contract, row, request.transition_id,
                       expected_revision=request.expected_revision, lease_kind=lease.kind,
                       lease_epoch=lease_epoch, current_epoch=epoch, facts=request.facts,
                       reconciliation_id=request.reconciliation_id,
                       evidence_digest=request.evidence_digest,
                       prior_reconciliation_ids=prior_ids, prior_evidence_digests=prior_digests)
    updated = apply_decision(
        tx, contract, row, decision, expected_revision=request.expected_revision, epoch=epoch,
        actor=lease.holder, receipt=request.receipt, next_check_after=request.next_check_after,
        error_code=request.error_code, reconciliation_id=request.reconciliation_id,
        evidence_digest=request.evidence_digest, observation_polls=request.observation_polls)
    if request.observation is not None:
        tx.run("insert_observation", operation_id=request.operation_id,
               observation_ordinal=updated.observation_ordinal, revision=updated.revision,
               transition_id=request.transition_id, document=dict(request.observation))
        tx.run("prune_observations", operation_id=request.operation_id,
               keep=MAX_OBSERVATIONS_PER_OPERATION)
    if row.submitting:
        tx.run("record_attempt_outcome", operation_id=request.operation_id,
               attempt_ordinal=row.attempt_ordinal, outcome=request.transition_id)
    if releases_capacity(decision.target):
        tx.run("release_operation_capacity", operation_id=request.operation_id,
               reason=request.transition_id)
    if records_watermark(decision.target, row.mutation_kind):
        raise_watermark(tx, updated)
    return updated


def settle_response(tx: UnitOfWork, contract: StateContract, request: TransitionRequest,
                    lease: Lease, verification: TransitionRequest | None,
                    verification_lease: LeaseClaim | None) -> tuple[ChildOperation, ...]:
    """The submit answer under the held mutation ``lease``, the verification it proves under a
    claim taken here (CAS on the revision the answer produced), and ``lease`` released: the
    steps a synchronous child takes after its response with no I/O between them."""
    answered = _transitioned(tx, contract, request, lease)
    if verification is None:
        release(tx, lease)
        return (child_model(answered),)
    if verification_lease is None or verification_lease.operation_id != request.operation_id \
            or verification.operation_id != request.operation_id:
        raise DponeError(code="journal.illegal_transition", operation_id=request.operation_id,
                         message="a verification settled with an answer needs a claim on the "
                         "same operation")
    follow = verification.model_copy(update={"expected_revision": answered.revision})
    verified = holding(tx, verification_lease, lambda held, taken: _transitioned(
        tx, contract, follow, held, taken_epoch=taken, written=answered), releasing=lease)
    return child_model(answered), child_model(verified)
