"""Operator reconciliation: the evidence an operator attests, the immutable reconciliation
artifact, and what ``dpone delivery reconcile`` prints.

* ``dpone.operator_evidence.v1``: a closed document the operator writes (``--evidence FILE``):
  the effect they found in the receiver's console, its counters and where they saw it. It is
  recorded as operator-attested, never as receiver-proven.
* ``dpone.rest_delivery_reconciliation.v1``: the artifact one reconciliation writes
  create-if-absent under a content address. It holds no wall-clock time (the audit row carries
  when), so the same reconciliation of the same revision writes the same bytes.
* ``dpone.delivery_reconcile_result.v1``: the command's ``--format json`` document.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from dpone.contracts._axes import StateTuple
from dpone.contracts._base import Digest, StrictModel
from dpone.contracts.documents._children import ReceiptScalar
from dpone.contracts.documents._report import Report
from dpone.contracts.journal import OrphanMarker

OPERATOR_EVIDENCE_SCHEMA_ID: Final = "dpone.operator_evidence.v1"
RECONCILIATION_SCHEMA_ID: Final = "dpone.rest_delivery_reconciliation.v1"
RECONCILE_RESULT_SCHEMA_ID: Final = "dpone.delivery_reconcile_result.v1"
RECONCILIATION_KEY_PREFIX: Final = "reconciliations/sha256/"
MAX_EVIDENCE_BYTES: Final = 16_384
"""An operator evidence file larger than this is refused before it is parsed."""

Count = Annotated[int, Field(ge=0)]
AttestedEffect = Literal["applied", "not_applied", "partially_applied"]
ProvenEffect = Literal["applied", "not_applied", "partially_applied", "unknown", "running"]
"""What a reconciliation proves: the whole effect, none, part of it, nothing new (the effect
stays unknown), or a receiver job of this delivery key still running."""
ProofKind = Literal["query_by_key", "receipt", "operator_evidence"]
Authority = Literal["receiver_proven", "operator_attested"]


class OperatorEvidence(StrictModel):
    """What an operator attests about one child's effect (``--evidence FILE``)."""

    schema_id: Literal["dpone.operator_evidence.v1"] = Field(alias="schema")
    effect: AttestedEffect
    accepted_rows: Count
    rejected_rows: Count
    receiver_reference: Annotated[str, Field(min_length=1, max_length=256)]
    """Where the operator saw it: a job id, a console URL, a ticket."""
    attested_by: Annotated[str, Field(min_length=1, max_length=128)]
    note: Annotated[str, Field(max_length=2_000)] | None = None


class ReconciledState(StrictModel):
    """One side of a reconciliation: the stored tuple and the journal revision."""

    state_name: str
    axes: StateTuple
    revision: Count


class ReconciliationProof(StrictModel):
    """How the effect was proven and on whose authority."""

    kind: ProofKind
    authority: Authority
    evidence_digest: Digest
    """The digest of the evidence itself (the poll answer's bounded scalars, the query
    result, or the operator's evidence document)."""
    receipt_id: str | None = None
    receiver_reference: str | None = None
    attested_by: str | None = None


class ReconciledCounters(StrictModel):
    """The receiver's (or the operator's) counters against the sealed rows of the child."""

    sealed_rows: Count
    accepted_rows: Count | None = None
    rejected_rows: Count | None = None


class Reconciliation(StrictModel):
    """The immutable ``dpone.rest_delivery_reconciliation.v1`` artifact of one reconciliation."""

    schema_id: Literal["dpone.rest_delivery_reconciliation.v1"] = Field(
        default=RECONCILIATION_SCHEMA_ID, alias="schema")
    reconciliation_id: str
    operation_id: str
    parent_id: str
    ordinal: Annotated[int, Field(ge=1)]
    delivery_key: Digest
    receiver_mutation_key: Digest
    mutation_intent_digest: Digest
    plan_digest: Digest
    profile_contract_digest: Digest
    before: ReconciledState
    proof: ReconciliationProof
    counters: ReconciledCounters
    effect: ProvenEffect
    transitions: tuple[str, ...]
    """The contract transitions that record it: open, then resolve."""
    after_state_name: str
    orphan_markers: tuple[OrphanMarker, ...] = ()
    """The orphan MAY_ATTEMPT markers of the child's delivery key this reconciliation covers
    (planned at ordinals above the journal's attempt ordinal, never entered into SUBMITTING):
    their ordinals are consumed, so a child proven not applied is resubmitted at a fresh one.
    Left out of the document when there is none."""

    @model_serializer(mode="wrap")
    def _without_empty_orphans(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not self.orphan_markers and isinstance(data, dict):
            data.pop("orphan_markers", None)
        return data


class ArtifactSummary(Report):
    key: str
    digest: Digest


class ReconcileResult(Report):
    """``dpone delivery reconcile``: what was (or, without ``--apply``, would be) recorded."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"reconciliation_artifact", "orphan_markers"})

    schema_id: Literal["dpone.delivery_reconcile_result.v1"] = Field(
        default=RECONCILE_RESULT_SCHEMA_ID, alias="schema")
    applied: bool
    """False: a read-only preview (a receipt may have been polled; nothing was written)."""
    parent_id: str
    operation_id: str
    ordinal: int
    delivery_key: Digest
    plan_digest: Digest
    profile_contract_digest: Digest
    reconciliation_id: str
    proof: ReconciliationProof
    counters: ReconciledCounters
    effect: ProvenEffect
    before: ReconciledState
    after: ReconciledState
    """With ``--apply`` the recorded state; without it the state it would record."""
    transitions: tuple[str, ...]
    receipt: dict[str, ReceiptScalar]
    reconciliation_artifact: ArtifactSummary | None = None
    orphan_markers: tuple[OrphanMarker, ...] = ()
    """The orphan MAY_ATTEMPT markers the reconciliation covers (given only when there is one)."""
    capacity: Literal["released", "kept"]
    """Whether the child's remote-job slot is released (effect proven applied or not applied)
    or kept (still running, unknown or partial)."""
    next_command: str | None
    exit_code: Literal[0, 4]
