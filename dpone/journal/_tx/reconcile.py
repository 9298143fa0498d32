"""One operator reconciliation, in one critical transaction under the operator lease.

The child is CAS-ed from its finalized UNKNOWN / PARTIALLY_APPLIED tuple through the contract's
open transition (a new reconciliation id), one ``*_orphan_consumed`` transition per
orphan MAY_ATTEMPT marker the reconciliation covers (``_orphans.consume_orphan_markers``), and
then its resolve transition (a new evidence digest), all guarded by the runtime contract; the
remote-job slot is released when the effect is proven applied or not applied (kept while
unknown, partial or still running); a fully applied replacement raises the domain's watermark;
and one ``operator_reconcile`` audit row records who, the evidence digest, the before and after
revisions and the reconciliation artifact. Any
refusal raises before commit, so nothing changes.

A child resolved to no effect here may later be submitted again with the same delivery key
(``absence_reconciled``): ``_effects.absence_reconciled`` proves it from the audit rows of the
revision that produced the stored tuple, never from the caller.
"""

from __future__ import annotations

from typing import Final

from dpone.contracts._axes import ExecutionState, RemoteEffect
from dpone.contracts._errors import DponeError
from dpone.contracts.journal import ChildOperation, Lease, ReconcileRequest
from dpone.contracts.state import (
    Fact,
    ListedTransition,
    ReconciliationStep,
    StateContract,
)
from dpone.journal._cas import apply_decision, audit, guarded
from dpone.journal._effects import raise_watermark, records_watermark
from dpone.journal._environment import environment
from dpone.journal._leases import check_lease_identity, live_lease
from dpone.journal._lookup import prior_reconciliation, require_child
from dpone.journal._models import child_model
from dpone.journal._orphans import consume_orphan_markers
from dpone.journal._unit import UnitOfWork

OPERATOR_RECONCILE: Final = "operator_reconcile"
"""The audit row of the operator action (``operator_<command>``)."""
RELEASING_EFFECTS: Final = frozenset({RemoteEffect.FULLY_APPLIED, RemoteEffect.NONE_PROVEN})


def _listed(contract: StateContract, transition_id: str, step: ReconciliationStep,
            operation_id: str) -> ListedTransition:
    listed = contract.transitions.get(transition_id)
    if listed is None or listed.automatic or listed.reconciliation is not step:
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message=f"{transition_id!r} is not an operator reconciliation "
                         f"{step.value} transition of the contract")
    return listed


def reconcile(tx: UnitOfWork, contract: StateContract, request: ReconcileRequest,
              lease: Lease) -> ChildOperation:
    operation_id = request.operation_id
    check_lease_identity(lease, operation_id, {"operator"})
    lease_epoch = live_lease(tx, lease).journal_epoch
    epoch = environment(tx).journal_epoch
    opening = _listed(contract, request.open_transition_id, ReconciliationStep.OPEN, operation_id)
    resolving = _listed(contract, request.resolve_transition_id, ReconciliationStep.RESOLVE,
                        operation_id)
    if resolving.source != opening.target:
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message=f"{resolving.id} does not resolve what {opening.id} opens")
    row = require_child(tx, operation_id)
    if (records_watermark(contract.tuples[resolving.target], row.mutation_kind)
            and tx.lock_domains([row.effect_conflict_domain])):
        row = require_child(tx, operation_id)  # the domain is held before the child
    prior_ids, prior_digests = prior_reconciliation(tx, operation_id)
    opened_decision = guarded(contract, row, opening.id,
                              expected_revision=request.expected_revision,
                              lease_kind="operator", lease_epoch=lease_epoch, current_epoch=epoch,
                              facts=(Fact.OPERATOR_AUTHORITY_AUDITED,),
                              reconciliation_id=request.reconciliation_id,
                              prior_reconciliation_ids=prior_ids,
                              prior_evidence_digests=prior_digests)
    opened = apply_decision(tx, contract, row, opened_decision,
                            expected_revision=request.expected_revision, epoch=epoch,
                            actor=request.actor, reconciliation_id=request.reconciliation_id)
    opened = consume_orphan_markers(tx, contract, opened, request.orphan_markers, lease,
                                    lease_epoch=lease_epoch, epoch=epoch, actor=request.actor,
                                    reconciliation_id=request.reconciliation_id)
    decision = guarded(contract, opened, resolving.id, expected_revision=opened.revision,
                       lease_kind="operator", lease_epoch=lease_epoch, current_epoch=epoch,
                       facts=request.facts, reconciliation_id=request.reconciliation_id,
                       evidence_digest=request.evidence_digest,
                       prior_reconciliation_ids=prior_ids | {request.reconciliation_id},
                       prior_evidence_digests=prior_digests)
    resolved = apply_decision(tx, contract, opened, decision, expected_revision=opened.revision,
                              epoch=epoch, actor=request.actor, receipt=request.receipt,
                              next_check_after=request.next_check_after,
                              error_code=request.error_code,
                              reconciliation_id=request.reconciliation_id,
                              evidence_digest=request.evidence_digest)
    target = decision.target
    if (target.execution_state is ExecutionState.FINALIZED
            and target.remote_effect in RELEASING_EFFECTS):
        tx.run("release_operation_capacity", operation_id=operation_id, reason=resolving.id)
    if records_watermark(target, row.mutation_kind):
        raise_watermark(tx, resolved)
    audit(tx, operation_id=operation_id, actor=request.actor, transition_id=OPERATOR_RECONCILE,
          from_state=row.state_name, to_state=resolved.state_name, revision=resolved.revision,
          operation_namespace=row.operation_namespace, tenant_id=row.tenant_id,
          reconciliation_id=request.reconciliation_id, evidence_digest=request.evidence_digest,
          digests={**request.audit, "command": "reconcile", "before_revision": row.revision,
                   "after_revision": resolved.revision})
    return child_model(resolved)
