"""Reconciling one child: prove its effect, choose the contract transitions, record it.

:func:`prove_by_evidence`, :func:`prove_by_receipt` and :func:`prove_by_status` turn a proof
into a :class:`Proof`; :func:`resolution` picks the contract's open and resolve transitions for the
proven effect from the child's stored tuple; :func:`reconciliation` builds the immutable
``dpone.rest_delivery_reconciliation.v1`` document; :func:`record` writes it create-if-absent
and commits the journal's reconcile transaction under the operator lease (released on every
exit path). Ports only: the journal and the artifact store are passed in.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from dpone.contracts import DponeError, canonical_json, content_digest
from dpone.contracts._axes import StateTuple
from dpone.contracts.documents import (
    RECONCILIATION_KEY_PREFIX,
    OperatorEvidence,
    ProvenEffect,
    ReconciledCounters,
    ReconciledState,
    Reconciliation,
    ReconciliationProof,
)
from dpone.contracts.journal import (
    ChildOperation,
    DeliveryJournalPort,
    OrphanMarker,
    ParentOperation,
    ReconcileRequest,
)
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ArtifactRef, ImmutableArtifactPort
from dpone.contracts.sealed import SealedChild
from dpone.contracts.state import EvidenceName, Fact, ReconciliationStep, StateContract
from dpone.executor.reconcile._decide import attested_effect, polled_effect
from dpone.executor.reconcile._receipt import PolledReceipt, poll_receipt
from dpone.executor.transport import RestTransportPort

OPERATOR_LEASE_TTL_S: Final = 300
EVIDENCE_KEY_PREFIX: Final = "operator-evidence/sha256/"

_RESOLVED_BY: Final[Mapping[ProvenEffect, tuple[EvidenceName, ...]]] = {
    "applied": (EvidenceName.FULL_EFFECT_PROVEN,),
    "not_applied": (EvidenceName.NO_EFFECT_PROVEN,),
    "partially_applied": (EvidenceName.PARTIAL_EFFECT_PROVEN,
                          EvidenceName.PARTIAL_EFFECT_CONFIRMED),
    "unknown": (EvidenceName.EFFECT_REMAINS_UNKNOWN,),
    "running": (EvidenceName.RECEIPT_FOUND_RUNNING,),
}
_ERROR_CODES: Final[Mapping[ProvenEffect, str | None]] = {
    "applied": None, "not_applied": None, "running": None,
    "partially_applied": "REST_DELIVERY_PARTIALLY_APPLIED",
    "unknown": "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN",
}


@dataclass(frozen=True)
class Proof:
    """An operator's proof of one child's effect, before anything is recorded."""

    detail: ReconciliationProof
    effect: ProvenEffect
    counters: ReconciledCounters
    receipt: dict[str, str | int] | None = None
    """The receipt to record (a polled receipt), or None to keep the stored one."""
    evidence_document: bytes | None = None
    """The operator's evidence as canonical JSON, stored under its digest."""


@dataclass(frozen=True)
class Resolution:
    """The contract transitions that record a proven effect, and where they lead."""

    open_transition: str
    resolve_transition: str
    facts: tuple[str, ...]
    target_name: str
    target: StateTuple
    error_code: str | None


def prove_by_evidence(evidence: OperatorEvidence, sealed: SealedChild) -> Proof:
    """Operator-attested evidence (never receiver-proven), checked against the sealed rows."""
    rows = sealed.descriptor.row_count
    effect = attested_effect(evidence, rows)
    document = canonical_json(evidence.model_dump(mode="json", by_alias=True, exclude_none=True))
    return Proof(
        detail=ReconciliationProof(kind="operator_evidence", authority="operator_attested",
                                   evidence_digest=content_digest(document),
                                   receiver_reference=evidence.receiver_reference,
                                   attested_by=evidence.attested_by),
        effect=effect,
        counters=ReconciledCounters(sealed_rows=rows, accepted_rows=evidence.accepted_rows,
                                    rejected_rows=evidence.rejected_rows),
        evidence_document=document)


def prove_by_receipt(plan: RestDeliveryPlan, transport: RestTransportPort,
                     operation: ChildOperation, sealed: SealedChild, receipt_id: str, *,
                     lookup: Mapping[str, str | int] | None = None) -> Proof:
    """A read-only poll of ``receipt_id`` (receiver-proven), checked against the sealed rows.

    ``lookup``: the bounded answer of the query by key that found the receipt; the proof is
    then of kind ``query_by_key`` and its evidence digest covers the lookup too."""
    polled = poll_receipt(plan, transport, operation, sealed, receipt_id)
    return prove_by_status(plan, operation, sealed, receipt_id, polled, lookup=lookup)


def prove_by_status(plan: RestDeliveryPlan, operation: ChildOperation, sealed: SealedChild,
                    receipt_id: str, polled: PolledReceipt, *,
                    lookup: Mapping[str, str | int] | None = None) -> Proof:
    """The effect a job status answer about ``receipt_id`` proves (receiver-proven), checked
    against the sealed rows: the receipt poll's answer, or a found query by key answer that is
    the job's status document (``lookup`` then holds the lookup's bounded evidence)."""
    rows = sealed.descriptor.row_count
    accepted, rejected = polled.values.get("accepted_rows"), polled.values.get("rejected_rows")
    accepted = accepted if isinstance(accepted, int) else None
    rejected = rejected if isinstance(rejected, int) else None
    declared = plan.profile.snapshot.verification.rejected_rows is not None
    effect = polled_effect(polled.outcome, rows, accepted, rejected, rejected_declared=declared)
    observed: dict[str, object] = {"operation_id": operation.operation_id,
                                   "receipt_id": receipt_id, "outcome": polled.outcome,
                                   **polled.values}
    if lookup is not None:
        observed["query_by_key"] = dict(lookup)
    return Proof(
        detail=ReconciliationProof(kind="receipt" if lookup is None else "query_by_key",
                                   authority="receiver_proven",
                                   evidence_digest=content_digest(canonical_json(observed)),
                                   receipt_id=receipt_id),
        effect=effect,
        counters=ReconciledCounters(sealed_rows=rows, accepted_rows=accepted,
                                    rejected_rows=rejected),
        receipt=polled.receipt)


def reconcilable(contract: StateContract, operation: ChildOperation) -> str | None:
    """The contract's open transition for ``operation``'s tuple, or None when it is not
    reconcilable (its effect is neither unknown nor partial, or it is not finalized)."""
    for listed in contract.outgoing(operation.state_name):
        if not listed.automatic and listed.reconciliation is ReconciliationStep.OPEN:
            return listed.id
    return None


def resolution(contract: StateContract, operation: ChildOperation,
               effect: ProvenEffect) -> Resolution:
    """The open and resolve transitions that record ``effect`` for ``operation``."""
    opening = reconcilable(contract, operation)
    if opening is None:
        raise DponeError(code="reconcile.not_reconcilable", operation_id=operation.operation_id,
                         message=f"child {operation.ordinal} is {operation.state_name}: only a "
                         "finalized unknown or partial effect is reconciled")
    reconciling = contract.transitions[opening].target
    for listed in contract.outgoing(reconciling):
        if listed.reconciliation is ReconciliationStep.RESOLVE and (
                listed.trigger.evidence in _RESOLVED_BY[effect]):
            facts = sorted({Fact.OPERATOR_AUTHORITY_AUDITED, Fact.READ_ONLY_RECEIVER_EVIDENCE}
                           | ({Fact.RECEIPT_PERSISTED} if effect == "running" else set()))
            return Resolution(open_transition=opening, resolve_transition=listed.id,
                              facts=tuple(facts), target_name=listed.target,
                              target=contract.tuples[listed.target],
                              error_code=_ERROR_CODES[effect])
    raise DponeError(code="reconcile.not_reconcilable", operation_id=operation.operation_id,
                     message=f"child {operation.ordinal} is {operation.state_name}: the state "
                     f"contract records no {effect.replace('_', ' ')} resolution from it",
                     details={"effect": effect})


def reconciliation_id(operation_id: str, revision: int, evidence_digest: str) -> str:
    """Deterministic from the child, the revision it reconciles and the evidence."""
    encoded = b"".join(len(part).to_bytes(4, "big") + part for part in (
        b"dpone.reconciliation.v1", operation_id.encode(), str(revision).encode(),
        evidence_digest.encode()))
    return "rec_v1_" + hashlib.sha256(encoded).hexdigest()


def reconciliation(plan: RestDeliveryPlan, parent: ParentOperation, operation: ChildOperation,
                   proof: Proof, resolved: Resolution,
                   orphans: Sequence[OrphanMarker] = ()) -> Reconciliation:
    """The immutable artifact of this reconciliation (no wall-clock time inside), covering the
    child's ``orphans`` (MAY_ATTEMPT markers never entered into SUBMITTING)."""
    return Reconciliation(
        reconciliation_id=reconciliation_id(operation.operation_id, operation.revision,
                                            proof.detail.evidence_digest),
        operation_id=operation.operation_id, parent_id=parent.parent_id,
        ordinal=operation.ordinal, delivery_key=operation.delivery_key,
        receiver_mutation_key=operation.receiver_mutation_key,
        mutation_intent_digest=operation.mutation_intent_digest,
        plan_digest=parent.plan_digest,
        profile_contract_digest=plan.profile.profile_contract_digest,
        before=ReconciledState(state_name=operation.state_name, axes=operation.axes,
                               revision=operation.revision),
        proof=proof.detail, counters=proof.counters, effect=proof.effect,
        transitions=(resolved.open_transition, resolved.resolve_transition),
        after_state_name=resolved.target_name, orphan_markers=tuple(orphans))


def artifact_key(document: bytes) -> str:
    return f"{RECONCILIATION_KEY_PREFIX}{content_digest(document).removeprefix('sha256:')}.json"


def record(journal: DeliveryJournalPort, artifacts: ImmutableArtifactPort,
           document: Reconciliation, proof: Proof, resolved: Resolution, *, actor: str,
           holder: str) -> tuple[ChildOperation, ArtifactRef]:
    """Write the artifact create-if-absent, then the journal's reconcile transaction, under the
    operator lease (released on every exit path)."""
    lease = journal.acquire_lease(document.operation_id, "operator", holder, OPERATOR_LEASE_TTL_S)
    try:
        if proof.evidence_document is not None:
            digest = content_digest(proof.evidence_document)
            artifacts.put_bytes(f"{EVIDENCE_KEY_PREFIX}{digest.removeprefix('sha256:')}.json",
                                proof.evidence_document)
        body = canonical_json(document.model_dump(mode="json", by_alias=True))
        stored = artifacts.put_bytes(artifact_key(body), body)
        due: dt.datetime | None = journal.now() if proof.effect == "running" else None
        updated = journal.reconcile(ReconcileRequest(
            operation_id=document.operation_id, expected_revision=document.before.revision,
            open_transition_id=resolved.open_transition,
            resolve_transition_id=resolved.resolve_transition, facts=resolved.facts,
            reconciliation_id=document.reconciliation_id,
            evidence_digest=proof.detail.evidence_digest, actor=actor, receipt=proof.receipt,
            next_check_after=due, error_code=resolved.error_code,
            audit={"proof": proof.detail.kind, "authority": proof.detail.authority,
                   "effect": proof.effect, "reconciliation_artifact": stored.digest,
                   **({"orphan_markers": len(document.orphan_markers)}
                      if document.orphan_markers else {})},
            orphan_markers=document.orphan_markers), lease)
    finally:
        with contextlib.suppress(DponeError):  # an expired lease needs no release
            journal.release_lease(lease)
    return updated, stored
