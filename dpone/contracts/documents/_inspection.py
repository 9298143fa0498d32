"""``dpone delivery inspect``: the journal's view of one delivery (``dpone.delivery_inspection.v1``),
read-only."""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

from pydantic import Field

from dpone.contracts._base import Digest
from dpone.contracts.documents._children import ChildRow
from dpone.contracts.documents._report import Interval, Report, Timestamp
from dpone.contracts.journal import Generation

DELIVERY_INSPECTION_SCHEMA_ID: Final = "dpone.delivery_inspection.v1"


class AttemptSummary(Report):
    attempt_ordinal: int
    marker_key: str
    outcome: str | None
    started_at: Timestamp


class ObservationSummary(Report):
    observation_ordinal: int
    transition_id: str
    observed_at: Timestamp
    document: dict[str, Any]


class LikelyCause(Report):
    """Why a child stopped: the HTTP status of the submit answer it recorded, or, when no
    answer came, the transport failure and its bound (``read timeout after 30 s``). A hint:
    the effect stays what the journal says."""

    http_status: int | None = None
    transport_failure: str | None = None
    summary: str


class InspectedChild(ChildRow):
    """A child with its keys, attempts, latest observations and receipt clock.

    ``payload_filename`` appears when the plan is in the plan store; the receipt clock when the
    child holds a receipt (its TTL horizon when the plan is known); ``likely_cause`` when the
    child stopped on a submit answer."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({
        "payload_filename", "receipt_recorded_at", "receipt_age_s", "receipt_ttl_horizon",
        "likely_cause"})

    receiver_mutation_key: Digest
    payload_filename: str | None = None
    allowed_actions: tuple[str, ...]
    attempts: tuple[AttemptSummary, ...]
    observations_total: int
    observations: tuple[ObservationSummary, ...]
    """The latest observations only; ``observations_total`` counts them all."""
    receipt_recorded_at: Timestamp | None = None
    receipt_age_s: int | None = None
    receipt_ttl_horizon: Timestamp | None = None
    likely_cause: LikelyCause | None = None


class KeyEcho(Report):
    source: str
    """``body <JSON pointer>`` or ``header <name>``."""
    form: str


class VerificationBasis(Report):
    """What a FULLY_APPLIED verdict rests on (``unknown`` when the plan is not in the plan
    store)."""

    rests_on: Literal["unknown", "counters_only", "counters_and_key_echo"]
    counters_from: str | None
    key_echo: KeyEcho | None


class OperatorActionSummary(Report):
    """One audited operator action on the delivery or one of its children (an audit row
    ``operator_<command>``): who ran which command when (journal clock), and the revision of
    the operation before and after it (a delivery's revision is the sum of its children's)."""

    audit_id: int
    operation_id: str
    command: str
    actor: str
    at: Timestamp
    before_revision: int
    after_revision: int
    from_state: str | None
    to_state: str | None
    evidence_digest: str | None
    reconciliation_id: str | None


class HeldLease(Report):
    """A lease on the delivery or one of its children that has not expired (journal clock):
    who holds it and until when. A lost run's lease blocks a takeover until ``expires_at``;
    `resume --apply` and `reconcile --apply` wait for it (one lease TTL at most)."""

    operation_id: str
    kind: str
    holder: str
    expires_at: Timestamp
    expires_in_s: int


class DeliveryInspection(Report):
    """``dpone delivery inspect --format json``. ``profile`` and ``authority`` appear when the
    plan is in the plan store."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"profile", "authority",
                                                    "payloads_expired_at"})

    schema_id: Literal["dpone.delivery_inspection.v1"] = Field(
        default=DELIVERY_INSPECTION_SCHEMA_ID, alias="schema")
    parent_id: str
    logical_route_id: str
    plan_digest: Digest
    parent_plan_digest: Digest
    mutation_kind: str
    generation: Generation
    boundary: Interval
    checkpoint_frontier: int
    children_total: int
    complete: bool
    next_actions: tuple[str, ...]
    """The allowed actions of the first unfinished child."""
    journal_now: Timestamp
    children: tuple[InspectedChild, ...]
    profile: str | None = None
    authority: str | None = None
    verification: VerificationBasis
    operator_actions: tuple[OperatorActionSummary, ...]
    """The audit trail: every operator action on the delivery and its children, oldest
    first."""
    payloads_expired_at: Timestamp | None = None
    """When payload retention (`dpone admin prune --apply`) deleted the sealed payloads; only
    present then."""
    leases: tuple[HeldLease, ...] = ()
    """The unexpired leases on the delivery and its children, soonest expiry first."""
