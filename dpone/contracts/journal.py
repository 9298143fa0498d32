"""The delivery journal port: admission, guarded transitions, leases, attempts, checkpoint.

Two adapters implement it with the same behaviour: PostgreSQL 15+ (production) and SQLite
(local development only). Every state change is a revision CAS that the runtime guard of
``dpone.rest-bulk-delivery-design.v1`` admits first; leases are decided by the database clock;
admission of a parent and its complete child topology is one transaction before any HTTP.
Errors are ``DponeError`` with catalog codes (``REST_DELIVERY_*`` for the spec's refusals,
``journal.*`` for CAS/lease/availability); adapters translate driver errors at the edge.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import Field

from dpone.contracts._axes import RemoteEffect, StateTuple
from dpone.contracts._base import Digest, StrictModel
from dpone.contracts.ports import DeliveryJournalPort, DeliveryJournalView, SupervisorJournal
from dpone.contracts.rate import RateTurn

__all__ = [  # the journal's ports are declared with every other port in dpone.contracts.ports
    "DeliveryJournalPort",
    "DeliveryJournalView",
    "SupervisorJournal",
]

LeaseKindName = Literal["mutation", "observation", "checkpoint", "operator"]
MutationGate = Literal["OPEN", "BLOCKED"]
NonNegative = Annotated[int, Field(ge=0)]


class Generation(StrictModel):
    """The ordered replacement generation of a delivery: (scheduled_interval_end_utc,
    correction_revision).

    ``scheduled_interval_end_utc`` is UTC midnight of the parent boundary's ``to_date``;
    ``correction_revision`` comes from the workload. Retries never change either. Sealed
    payload documents and journal rows carry the same value.
    """

    scheduled_interval_end_utc: dt.datetime
    correction_revision: NonNegative


class Tenancy(StrictModel):
    """Row-level scoping of every journal row."""

    operation_namespace: Digest
    tenant_id: str
    environment_id: str


class ChildAdmission(StrictModel):
    """One sealed child of the topology, admitted with its parent."""

    ordinal: Annotated[int, Field(ge=1)]
    delivery_key: Digest
    receiver_mutation_key: Digest
    mutation_intent_digest: Digest
    scope_from: dt.date
    scope_to: dt.date
    first_row: NonNegative
    row_count: NonNegative
    payload_key: str
    payload_digest: Digest
    payload_document_key: str
    wire_bytes: NonNegative


class ParentAdmission(StrictModel):
    """The complete immutable parent plan: admitted whole, or not at all."""

    tenancy: Tenancy
    logical_route_id: str
    plan_digest: Digest
    parent_plan_digest: Digest
    frozen_parent_digest: Digest
    profile_contract_digest: Digest
    effect_conflict_domain: Digest
    mutation_kind: Literal["partition_replace", "incremental_append"]
    generation: Generation
    boundary_from: dt.date
    boundary_to: dt.date
    max_remote_jobs: Annotated[int, Field(ge=1, le=64)]
    children: tuple[ChildAdmission, ...]
    replay_fence_certified: bool = False
    """The plan's receiver fence is certified in this environment: same-key replay may follow."""
    max_submit_attempts: Annotated[int, Field(ge=1, le=100)] = 1
    """The profile's submit attempts; the journal refuses a replay beyond them."""
    replay_retention_s: Annotated[int, Field(ge=0)] | None = None
    """How long after a child's first attempt a certification proves the receiver keeps its key
    (the plan's ``fence.certified_retention_s``): a lost submit taken over later than that, or
    with None, stays UNKNOWN."""
    profile_ref: str | None = None
    """The plan's operation profile ``id@version``: a revocation of it refuses every new submit
    of the parent's children (None: checked against no profile revocation)."""
    binding_ref: str | None = None
    """The plan's connection binding id: a revocation of it refuses every new submit."""
    identity_valid_until: dt.datetime | None = None
    """The binding's ``remote_identity.valid_until``: from then on (journal clock) no child of
    the parent enters SUBMITTING; observation and reconciliation stay available."""
    observation_days: Annotated[int, Field(ge=1, le=3650)] | None = None
    """The profile's ``retention.observation_days``: the admission transaction deletes the
    observations older than this (database clock) of FINALIZED children admitted under the
    same profile contract; receipts, attempts, audits and effect authority stay."""
    payload_days: Annotated[int, Field(ge=1, le=3650)] | None = None
    """The profile's ``retention.payload_days``, recorded with the parent: `dpone admin prune`
    deletes its sealed payloads once it is older than this (journal clock) and every child is
    settled (None: never)."""


class ChildOperation(StrictModel):
    """A child operation as the journal holds it now."""

    operation_id: str
    parent_id: str
    ordinal: int
    tenancy: Tenancy
    delivery_key: Digest
    receiver_mutation_key: Digest
    mutation_intent_digest: Digest
    effect_conflict_domain: Digest
    generation: Generation
    scope_from: dt.date
    scope_to: dt.date
    payload_key: str
    payload_digest: Digest
    payload_document_key: str
    """The sealed ``dpone.rest_payload.v1`` document: recovery's authority for the request."""
    state_name: str
    axes: StateTuple
    revision: NonNegative
    journal_epoch: NonNegative
    attempt_ordinal: NonNegative
    observation_ordinal: NonNegative
    receipt: dict[str, Any] | None = None
    next_check_after: dt.datetime | None = None
    last_error_code: str | None = None
    row_count: NonNegative
    """The sealed rows of the child (0: an empty window of the frozen parent)."""
    wire_bytes: NonNegative | None = None
    """The sealed payload's bytes on the wire, as admitted (None where a test builds a child
    without it)."""

    @property
    def without_rows(self) -> bool:
        """No sealed rows and no attempt: what an empty window of the frozen parent looks like."""
        return self.row_count == 0 and self.attempt_ordinal == 0

    @property
    def empty_input(self) -> EmptyInputOutcome | None:
        """How a child without rows was finalized without a request, else None."""
        return empty_input_outcome(self.state_name, self.row_count, self.attempt_ordinal,
                                   self.last_error_code, self.axes.remote_effect)


EmptyInputOutcome = Literal["skipped", "verified"]
"""``skipped`` (``empty_input: skip``: no checkpoint of its own, the frontier passes over it) or
``verified`` (``empty_input: promote`` of an append: 0 of 0 rows verified, promoted with the
frontier; an empty replacement is submitted instead and is no empty-input outcome)."""


def empty_input_outcome(state_name: str, row_count: int, attempt_ordinal: int,
                        last_error_code: str | None,
                        remote_effect: str) -> EmptyInputOutcome | None:
    """How a child that holds no rows was finalized without any attempt, else None.

    Only a child without rows and without any attempt qualifies; a refused child (an error
    code) or one that ever entered SUBMITTING is never an empty-input outcome.
    """
    if row_count or attempt_ordinal or last_error_code is not None:
        return None
    if state_name == "final_not_started":
        return "skipped"
    if state_name.startswith("final_") and remote_effect == RemoteEffect.FULLY_APPLIED:
        return "verified"
    return None


class ParentOperation(StrictModel):
    parent_id: str
    tenancy: Tenancy
    logical_route_id: str
    plan_digest: Digest
    parent_plan_digest: Digest
    effect_conflict_domain: Digest
    mutation_kind: Literal["partition_replace", "incremental_append"]
    generation: Generation
    boundary_from: dt.date
    boundary_to: dt.date
    checkpoint_frontier: NonNegative
    children: tuple[ChildOperation, ...]
    payloads_expired_at: dt.datetime | None = None
    """When `dpone admin prune --apply` expired the sealed payloads (None: they are kept);
    commands that need the bytes refuse such a parent with ``retention.payloads_expired``."""


class ChildStanding(StrictModel):
    """How many children of one delivery stand in one state (with one last error code)."""

    state_name: str
    axes: StateTuple
    last_error_code: str | None = None
    without_rows: bool = False
    """No sealed rows and no attempt (see :attr:`ChildOperation.without_rows`)."""
    children: Annotated[int, Field(ge=1)]
    first_ordinal: Annotated[int, Field(ge=1)]
    """The lowest ordinal among them: where the supervisor meets this state first."""

    @property
    def empty_input(self) -> EmptyInputOutcome | None:
        """How these children without rows were finalized without a request, else None."""
        return empty_input_outcome(self.state_name, 0 if self.without_rows else 1, 0,
                                   self.last_error_code, self.axes.remote_effect)


class DeliverySummary(StrictModel):
    """One admitted delivery as a listing shows it: its children grouped by state."""

    parent_id: str
    logical_route_id: str
    mutation_kind: Literal["partition_replace", "incremental_append"]
    boundary_from: dt.date
    boundary_to: dt.date
    admitted_at: dt.datetime
    checkpoint_frontier: NonNegative
    children_total: NonNegative
    standings: tuple[ChildStanding, ...]
    """Ordered by ``first_ordinal``."""


class AdmissionResult(StrictModel):
    parent: ParentOperation
    resumed: bool


class MutationGateStatus(StrictModel):
    """The environment-wide mutation gate of a journal and the epoch it stands at."""

    environment_id: str
    mutation_gate: MutationGate
    journal_epoch: Annotated[int, Field(ge=0)]
    reason: str | None = None
    updated_by: str | None = None
    updated_at: dt.datetime | None = None


class Lease(StrictModel):
    """A lease granted by the database clock; ``token`` fences a stale holder."""

    operation_id: str
    kind: LeaseKindName
    holder: str
    token: Annotated[int, Field(ge=1)]
    expires_at: dt.datetime


class LeaseClaim(StrictModel):
    """A lease held for one journal transaction only, where a port method takes a ``Lease``.

    The transaction takes the lease first (refused with ``journal.lease_held`` while another
    holder's lease of that kind is live, exactly as ``acquire_lease``), does its work under it
    and releases it before it commits: nothing of the lease outlives the transaction, so a step
    that needs no I/O while it is held (a verification, a promotion) costs one transaction, not
    three.
    """

    operation_id: str
    kind: LeaseKindName
    holder: str
    ttl_seconds: Annotated[int, Field(ge=1)]


MAY_ATTEMPT_MARKER_SCHEMA_ID = "dpone.may_attempt_marker.v1"


def may_attempt_marker_key(operation_namespace: str, operation_id: str,
                           attempt_ordinal: int) -> str:
    """Where an attempt's MAY_ATTEMPT marker lives in the artifact store:
    ``markers/<namespace hex>/<operation_id>/<attempt_ordinal>.json``."""
    return (f"markers/{operation_namespace.removeprefix('sha256:')}/{operation_id}/"
            f"{attempt_ordinal}.json")


class OrphanMarker(StrictModel):
    """A MAY_ATTEMPT marker of the child's delivery key at an ordinal above the journal's
    ``attempt_ordinal``: planned, never entered into SUBMITTING in this journal. A
    reconciliation covers it and consumes its ordinal (an attempt row, never a reservation)."""

    attempt_ordinal: Annotated[int, Field(ge=1)]
    marker_key: str
    marker_digest: Digest


class AttemptPlan(StrictModel):
    """The next attempt: its ordinal, deterministic id and the MAY_ATTEMPT marker document."""

    operation_id: str
    attempt_ordinal: Annotated[int, Field(ge=1)]
    attempt_id: str
    marker_key: str
    marker: dict[str, Any]
    takeover_age_s: Annotated[float, Field(ge=0)] | None = None
    """Set when planned as the takeover of a lost submit (``plan_attempt(takeover=True)``): the
    age of the child's first attempt by the journal clock, within the admitted certified key
    retention. ``enter_submitting`` then takes the takeover replay transition."""


class SubmitLease(StrictModel):
    """A mutation lease taken to submit one child, and its next attempt planned in the same
    transaction when the child is due now (a sealed child, a retry whose delay has elapsed by
    the journal clock, a resubmit after a reconciliation); ``attempt`` is None otherwise (the
    caller waits, then calls ``plan_attempt``). With a rate request, the first attempt's submit
    turn and active-request slot are taken in that transaction too (``turn``)."""

    lease: Lease
    attempt: AttemptPlan | None
    turn: RateTurn | None = None
    """The receiver account's submit turn taken in the same transaction, when the caller asked
    for it and the attempt was planned (None: not asked, or no attempt planned)."""


class TransitionRequest(StrictModel):
    """One guarded transition: the guard's inputs plus the row fields the transition sets.

    The caller names the transition and proves its guard ``facts``; the trigger and its evidence
    name come from the contract's entry for ``transition_id``, never from the caller.
    """

    operation_id: str
    transition_id: str
    expected_revision: NonNegative
    facts: tuple[str, ...] = ()
    reconciliation_id: str | None = None
    evidence_digest: str | None = None
    receipt: dict[str, Any] | None = None
    next_check_after: dt.datetime | None = None
    error_code: str | None = None
    observation: dict[str, Any] | None = None
    observation_polls: Annotated[int, Field(ge=1)] = 1
    """The receipt polls ``observation`` records: the answer of this one and of the unchanged
    running answers before it that were not recorded (the ordinal advances by all of them)."""


class ReconcileRequest(StrictModel):
    """One operator reconciliation, recorded in one critical transaction under the operator
    lease: the contract's open transition (a new reconciliation id), its resolve transition
    (the new evidence digest and the facts it proves), and the operator audit row.

    ``audit`` holds what the audit row's ``digests`` record besides the command and the before
    and after revisions (the proof kind and the reconciliation artifact's digest).
    """

    operation_id: str
    expected_revision: NonNegative
    open_transition_id: str
    resolve_transition_id: str
    facts: tuple[str, ...]
    reconciliation_id: str
    evidence_digest: Digest
    actor: Annotated[str, Field(min_length=1, max_length=256)]
    receipt: dict[str, Any] | None = None
    next_check_after: dt.datetime | None = None
    error_code: str | None = None
    audit: dict[str, str | int] = {}
    orphan_markers: tuple[OrphanMarker, ...] = ()
    """The orphan MAY_ATTEMPT markers the reconciliation covers, in ordinal order from
    ``attempt_ordinal + 1``: each is consumed between the open and resolve transitions."""


OPERATOR_TRANSITION_PREFIX = "operator_"
"""An operator action's audit row has the transition id ``operator_<command>``."""


class OperatorActionRecord(StrictModel):
    """One audited operator action to append: who ran which command on which operation, and
    the operation's revision before and after it (``digests`` of the audit row hold
    ``command``, ``before_revision``, ``after_revision`` and ``details``)."""

    operation_id: str
    command: Annotated[str, Field(pattern=r"^[a-z][a-z_]{0,63}$")]
    actor: Annotated[str, Field(min_length=1, max_length=128)]
    before_revision: NonNegative
    after_revision: NonNegative
    from_state: str | None = None
    to_state: str | None = None
    evidence_digest: Digest | None = None
    reconciliation_id: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    """JSON-safe facts the command adds (never a secret)."""

    @property
    def transition_id(self) -> str:
        return OPERATOR_TRANSITION_PREFIX + self.command


class OperatorAction(OperatorActionRecord):
    """An audited operator action as the journal holds it: its audit id and journal time."""

    audit_id: Annotated[int, Field(ge=1)]
    at: dt.datetime


class AuditRecord(StrictModel):
    """One row of the journal's audit trail: who (``actor``) took which decision
    (``transition_id``) on which operation, from and to which state at which revision, with the
    digests it was expected under (``digests``) and the artifact that proves it
    (``evidence_digest``)."""

    audit_id: Annotated[int, Field(ge=1)]
    at: dt.datetime
    actor: str
    """The lease holder of the run that took it, ``journal.admission``, or the operator."""
    operation_id: str
    operation_namespace: str | None
    tenant_id: str | None
    transition_id: str
    """The decision: a transition of the design contract, or ``operator_<command>``."""
    from_state: str | None
    to_state: str | None
    revision: int | None
    reconciliation_id: str | None
    evidence_digest: str | None
    """The content-addressed artifact that proves the decision, when one does."""
    digests: dict[str, Any]
    """The digests the decision was expected under (plan, payload, intent...) and, for an
    operator action, its command, revisions and details."""
