"""An orphan MAY_ATTEMPT marker met before an attempt, in one critical transaction.

The caller planned the next attempt of a SEALED or RETRY_WAIT child, or the resubmit of a child
an operator reconciliation proved not applied (``plan_attempt``), and the artifact store refused
its marker: the key already holds other bytes, a marker planned in another journal epoch (a
journal restore forgot the attempt it announced) or one that appeared after the reconciliation
looked (planned against an older revision by a run that had lost its lease). A request of that
attempt may have reached the receiver, so the child is never submitted under that ordinal and
never resent without proof: the contract's ``*_orphan_marker_found`` transition finalizes it
with an UNKNOWN effect (``REST_DELIVERY_REMOTE_EFFECT_UNKNOWN``), advancing ``attempt_ordinal``
to the orphan's ordinal, and an attempt row records the orphan (its marker key and digest,
started now: the time base a query by key measures its horizon from). Only a reconciliation can
then prove the effect; a proven absence lets ``resume`` submit the next ordinal with the same
delivery key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dpone.contracts._axes import ExecutionState
from dpone.contracts._errors import DponeError
from dpone.contracts.journal import AttemptPlan, ChildOperation, Lease
from dpone.contracts.state import Fact, StateContract, StateName, Transition
from dpone.journal._cas import apply_decision, guarded
from dpone.journal._effects import absence_reconciled
from dpone.journal._environment import environment
from dpone.journal._ids import attempt_id
from dpone.journal._leases import check_lease_identity, live_lease
from dpone.journal._lookup import require_child
from dpone.journal._marker import marker_digest, marker_key
from dpone.journal._models import child_model
from dpone.journal._unit import UnitOfWork

ORPHAN_TRANSITIONS: Final[Mapping[str, Transition]] = {
    StateName.SEALED: Transition.SEALED_ORPHAN_MARKER_FOUND,
    StateName.RETRY_WAIT: Transition.RETRY_WAIT_ORPHAN_MARKER_FOUND,
    StateName.FINAL_NOT_ACCEPTED_NONE: Transition.FINAL_NOT_ACCEPTED_NONE_ORPHAN_MARKER_FOUND,
    StateName.FINAL_ACCEPTED_NONE: Transition.FINAL_ACCEPTED_NONE_ORPHAN_MARKER_FOUND,
    StateName.FINAL_FAILED_NONE: Transition.FINAL_FAILED_NONE_ORPHAN_MARKER_FOUND,
    StateName.FINAL_CANCELLED_NONE: Transition.FINAL_CANCELLED_NONE_ORPHAN_MARKER_FOUND,
    StateName.FINAL_EXPIRED_NONE: Transition.FINAL_EXPIRED_NONE_ORPHAN_MARKER_FOUND,
    StateName.FINAL_PROTOCOL_UNKNOWN_NONE: Transition.FINAL_PROTOCOL_UNKNOWN_NONE_ORPHAN_MARKER_FOUND,
}
"""Where an orphan marker met before the next attempt is recorded: before a first attempt, a
due retry, or a resubmit an operator reconciliation allowed (the journal proves
``absence_reconciled`` from the audit, as for the resubmit itself)."""
ORPHAN_ERROR: Final = "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"


def record_orphan_marker(tx: UnitOfWork, contract: StateContract, attempt: AttemptPlan,
                         orphan_digest: str, lease: Lease, expected_revision: int) -> ChildOperation:
    operation_id = attempt.operation_id
    check_lease_identity(lease, operation_id, {"mutation"})
    lease_epoch = live_lease(tx, lease).journal_epoch
    epoch = environment(tx).journal_epoch
    row = require_child(tx, operation_id)
    transition_id = ORPHAN_TRANSITIONS.get(row.state_name)
    facts = {Fact.ORPHAN_MARKER_FOUND}
    if transition_id is not None and row.state.execution_state is ExecutionState.FINALIZED:
        if not absence_reconciled(tx, contract, row):
            transition_id = None
        facts.add(Fact.ABSENCE_RECONCILED)
    if transition_id is None:
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message=f"{row.state_name}: only a SEALED, RETRY_WAIT or reconciled "
                         "not-applied child meets an orphan marker before its next attempt")
    ordinal = row.attempt_ordinal + 1
    key = marker_key(row.operation_namespace, operation_id, ordinal)
    if (attempt.attempt_ordinal != ordinal or attempt.marker_key != key
            or attempt.attempt_id != attempt_id(row.operation_namespace, operation_id, ordinal)):
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message=f"attempt {attempt.attempt_ordinal} is not the next attempt "
                         f"({ordinal}) of this child")
    if orphan_digest == marker_digest(attempt.marker):
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message="the marker at the key is this attempt's own marker, not an "
                         "orphan: enter SUBMITTING with it instead")
    decision = guarded(contract, row, transition_id, expected_revision=expected_revision,
                       lease_kind="mutation", lease_epoch=lease_epoch, current_epoch=epoch,
                       facts=facts, evidence_digest=orphan_digest)
    tx.run("insert_attempt", attempt_id=attempt.attempt_id, operation_id=operation_id,
           attempt_ordinal=ordinal, marker_key=key, marker_digest=orphan_digest,
           expected_revision=expected_revision, journal_epoch=epoch,
           lease_holder=lease.holder, lease_token=lease.token)
    tx.run("record_attempt_outcome", operation_id=operation_id, attempt_ordinal=ordinal,
           outcome=transition_id)
    updated = apply_decision(tx, contract, row, decision, expected_revision=expected_revision,
                             epoch=epoch, actor=lease.holder, error_code=ORPHAN_ERROR,
                             evidence_digest=orphan_digest)
    return child_model(updated)

