"""A transition is a guarded update: the contract's guard decides, a revision CAS applies it.

``guarded`` runs the runtime guard of the state contract over a stored tuple (the trigger and
its evidence name are the contract's; the caller proves only facts) and turns a refusal into a
catalog ``DponeError``. ``apply_decision`` writes an admitted decision with ``cas_child`` (zero
rows is a revision conflict, never a silent no-op) and appends its audit row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping
from typing import Any, Protocol

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import LeaseKindName
from dpone.contracts.state import (
    Evidence,
    LeaseKind,
    RevisionConflict,
    StateContract,
    StateTuple,
    TransitionDecision,
    TransitionGuard,
    TransitionRefused,
)
from dpone.journal._rows import ChildRow
from dpone.journal._unit import UnitOfWork
from dpone.observability import metrics


class GuardedRow(Protocol):
    """What the guard reads of an operation: its id, stored tuple and revision."""

    @property
    def operation_id(self) -> str: ...

    @property
    def state(self) -> StateTuple: ...

    @property
    def revision(self) -> int: ...


def axis_values(state: StateTuple) -> dict[str, str]:
    """The axes as plain strings, keyed by column name (the columns are named as the axes)."""
    return state.to_document()


def refusal_error(refusal: TransitionRefused, operation_id: str | None) -> DponeError:
    """Map a guard refusal onto the catalog: CAS refusals vs. illegal transitions."""
    conflict = isinstance(refusal, RevisionConflict)
    if conflict:
        metrics.cas_conflict()
    code = "journal.revision_conflict" if conflict else "journal.illegal_transition"
    return DponeError(code=code, message=str(refusal), operation_id=operation_id,
                      details={"reason": str(refusal.reason),
                               "transition_id": refusal.transition_id})


def guarded(
    contract: StateContract,
    row: GuardedRow,
    transition_id: str,
    *,
    expected_revision: int,
    lease_kind: LeaseKindName,
    lease_epoch: int,
    current_epoch: int,
    facts: Collection[str] = (),
    reconciliation_id: str | None = None,
    evidence_digest: str | None = None,
    prior_reconciliation_ids: Collection[str] = (),
    prior_evidence_digests: Collection[str] = (),
) -> TransitionDecision:
    """Run the runtime guard for one stored operation; refusals become ``DponeError``.

    The trigger and its evidence name are the contract's for ``transition_id``; the caller
    proves only ``facts`` (and the reconciliation ids of an operator transition).
    """
    guard = TransitionGuard(contract)
    try:
        evidence = Evidence.listed(guard.listed(transition_id), facts,
                                   reconciliation_id=reconciliation_id,
                                   evidence_digest=evidence_digest)
        return guard.check(
            row.state, transition_id,
            expected_revision=expected_revision,
            actual_revision=row.revision,
            lease_kind=LeaseKind(lease_kind),
            journal_epoch=lease_epoch,
            current_epoch=current_epoch,
            evidence=evidence,
            prior_reconciliation_ids=prior_reconciliation_ids,
            prior_evidence_digests=prior_evidence_digests,
        )
    except TransitionRefused as refusal:
        raise refusal_error(refusal, row.operation_id) from None


def audit_params(*, operation_id: str, actor: str, transition_id: str, from_state: str | None,
                 to_state: str | None, revision: int | None,
                 operation_namespace: str | None = None, tenant_id: str | None = None,
                 reconciliation_id: str | None = None, evidence_digest: str | None = None,
                 digests: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``insert_audit`` parameters of one audit row (batched with ``UnitOfWork.run_many``)."""
    return {"operation_namespace": operation_namespace, "tenant_id": tenant_id, "actor": actor,
            "operation_id": operation_id, "transition_id": transition_id,
            "from_state": from_state, "to_state": to_state, "revision": revision,
            "reconciliation_id": reconciliation_id, "evidence_digest": evidence_digest,
            "digests": dict(digests or {})}


def audit(tx: UnitOfWork, *, operation_id: str, actor: str, transition_id: str,
          from_state: str | None, to_state: str | None, revision: int | None,
          operation_namespace: str | None = None, tenant_id: str | None = None,
          reconciliation_id: str | None = None, evidence_digest: str | None = None,
          digests: Mapping[str, Any] | None = None) -> None:
    tx.run("insert_audit", **audit_params(
        operation_id=operation_id, actor=actor, transition_id=transition_id,
        from_state=from_state, to_state=to_state, revision=revision,
        operation_namespace=operation_namespace, tenant_id=tenant_id,
        reconciliation_id=reconciliation_id, evidence_digest=evidence_digest, digests=digests))


def apply_decision(tx: UnitOfWork, contract: StateContract, row: ChildRow,
                   decision: TransitionDecision, *, expected_revision: int, epoch: int,
                   actor: str, receipt: Mapping[str, Any] | None = None,
                   next_check_after: dt.datetime | None = None, error_code: str | None = None,
                   reconciliation_id: str | None = None,
                   evidence_digest: str | None = None, observation_polls: int = 1) -> ChildRow:
    """The guarded CAS update for an admitted decision; zero rows is a revision conflict.

    ``observation_polls``: how far an observation advances ``observation_ordinal`` (the receipt
    polls its record covers)."""
    target_name = contract.name_of(decision.target)
    stored = tx.cas_audited(
        {"operation_id": row.operation_id, "expected_revision": expected_revision,
         "state_name": target_name, "journal_epoch": epoch,
         "attempt_step": 1 if "attempt_ordinal" in decision.advances else 0,
         "observation_step": (observation_polls if "observation_ordinal" in decision.advances
                              else 0),
         "receipt": dict(receipt) if receipt is not None else None,
         "next_check_after": next_check_after, "error_code": error_code,
         **axis_values(decision.target)},
        {"operation_id": row.operation_id, "actor": actor,
         "transition_id": decision.transition_id, "from_state": row.state_name,
         "to_state": target_name, "reconciliation_id": reconciliation_id,
         "evidence_digest": evidence_digest,
         "digests": {"mutation_intent_digest": row.mutation_intent_digest}})
    if stored is None:
        metrics.cas_conflict()
        raise DponeError(code="journal.revision_conflict", operation_id=row.operation_id,
                         message=f"{decision.transition_id}: revision {expected_revision} is "
                         "no longer current; reread the operation")
    return ChildRow.decode(tx.codec, stored)
