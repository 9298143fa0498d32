"""Capability ports (``typing.Protocol``): the runtime sees storage, the network, credentials and
time only through these, one per capability, read separated from write.

* :class:`ImmutableArtifactPort`: create-if-absent, digest-verified object storage;
* :class:`DeliveryJournalView` (read-only: inspection, the trigger, operators) and
  :class:`DeliveryJournalPort` (admission, guarded transitions, leases, checkpointing);
* :class:`JournalMetricsView`: the journal's numbers for the metrics exporter (read-only);
* :class:`RestTransportPort`: one request to the bound receiver, a tagged outcome back;
* :class:`CredentialResolver`: a binding's ``credential_ref`` to an unprintable credential;
* :class:`Clock`: the worker's monotonic and wall clocks and its sleep.

Adapters live in ``dpone.artifacts``, ``dpone.journal`` and ``dpone.executor``; each proves its
conformance to mypy (``_: Port = Adapter(...)``). Composition roots (the CLI) build them and pass
them in.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from dpone.contracts._base import Digest, StrictModel

if TYPE_CHECKING:
    from dpone.contracts.binding import ConnectionBinding
    from dpone.contracts.journal import (
        AdmissionResult,
        AttemptPlan,
        AuditRecord,
        ChildOperation,
        DeliverySummary,
        Lease,
        LeaseClaim,
        LeaseKindName,
        MutationGate,
        MutationGateStatus,
        OperatorAction,
        OperatorActionRecord,
        ParentAdmission,
        ParentOperation,
        ReconcileRequest,
        SubmitLease,
        Tenancy,
        TransitionRequest,
    )
    from dpone.contracts.journal_metrics import JournalMetricsSnapshot
    from dpone.contracts.rate import ActiveSlot, RateTurn, RateTurnRequest
    from dpone.contracts.retention import RetentionPlan
    from dpone.contracts.revocation import RevocationStatus, RevocationTarget
    from dpone.contracts.secret import Credential
    from dpone.contracts.transport import OutboundRequest, TransportOutcome


class ArtifactRef(StrictModel):
    """Where an immutable artifact lives and what its bytes hash to."""

    key: str
    digest: Digest
    size: int


class ImmutableArtifactPort(Protocol):
    """Create-if-absent, digest-verified object storage.

    Writing a key that exists with the same bytes is a no-op returning the same ref; with other
    bytes it raises ``DponeError(code="artifact.conflict")`` and never overwrites. Reads verify
    nothing by themselves: callers compare ``ArtifactRef.digest`` when they need to.
    """

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef: ...

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef: ...

    def get_bytes(self, key: str) -> bytes: ...

    def open_stream(self, key: str, chunk_size: int = 1 << 20) -> Iterator[bytes]: ...

    def stat(self, key: str) -> ArtifactRef | None: ...

    def local_file(self, key: str) -> Path | None:
        """A file on this machine that holds the artifact's bytes, to be read in place (never
        written), when the store keeps its artifacts as local files; None otherwise, and the
        caller reads :meth:`open_stream`."""
        ...


@runtime_checkable
class AdoptsFiles(Protocol):
    """A store that keeps artifacts as local files and publishes a file the caller wrote and
    hashed as it is (the local store's ``adopt_file``: fsynced, made read-only and linked to its
    key, create-if-absent; copied only across filesystems): a frozen parent or a sealed payload
    is then neither copied nor hashed again."""

    def adopt_file(self, key: str, source: Path, digest: str, size: int) -> ArtifactRef: ...


class ArtifactExpiryPort(Protocol):
    """The one deletion an artifact store offers, kept apart from :class:`ImmutableArtifactPort`
    so that nothing but `dpone admin prune` (payload retention) can delete: the runtime never
    holds it."""

    def expire(self, key: str) -> bool:
        """Delete the artifact ``key``; True when it existed, False when there was none (an
        absent key is not an error: a prune that stopped half-way is run again)."""
        ...


class PrunableArtifactPort(ImmutableArtifactPort, ArtifactExpiryPort, Protocol):
    """An artifact store with its deletion: what `dpone admin prune` opens."""


class JournalReads(Protocol):
    """The reads a delivery run makes: its parent, one child, the journal's clock."""

    def load_parent(self, parent_id: str) -> ParentOperation: ...

    def get_child(self, operation_id: str) -> ChildOperation: ...

    def now(self) -> dt.datetime:
        """The journal's database clock (aware UTC), never the worker clock.

        Due times the journal compares with its own clock (``next_check_after``) are computed
        from this value.
        """
        ...


class DeliveryJournalView(JournalReads, Protocol):
    """Read-only access: inspection, the Airflow trigger, operators."""

    def find_parent(self, tenancy: Tenancy, parent_plan_digest: str) -> ParentOperation | None: ...

    def check_admitted_leases(self, tenancy: Tenancy, plan_digest: str,
                              boundary_from: dt.date, boundary_to: dt.date) -> None:
        """Raise ``journal.lease_held`` (holder and expiry named) when a delivery of
        ``plan_digest`` over ``[boundary_from, boundary_to)`` was admitted and one of its
        children holds a live mutation lease: a rerun stops before freezing or sealing."""
        ...

    def list_attempts(self, operation_id: str) -> Sequence[Mapping[str, Any]]: ...

    def list_observations(self, operation_id: str) -> Sequence[Mapping[str, Any]]: ...

    def list_deliveries(self, limit: int) -> Sequence[DeliverySummary]:
        """The newest ``limit`` deliveries of this journal's environment, newest admission
        first, each with its children grouped by state (one read, never a migration)."""
        ...

    def list_operator_actions(self, operation_ids: Sequence[str]) -> Sequence[OperatorAction]:
        """The audited operator actions (audit rows ``operator_<command>``) of these
        operations, oldest first: the audit trail `dpone delivery inspect` shows."""
        ...

    def list_audit(self, *, operation_id: str | None = None, since: dt.datetime | None = None,
                   limit: int) -> Sequence[AuditRecord]:
        """The environment's audit records, oldest first, at most ``limit``: of the delivery or
        child ``operation_id`` (a delivery's includes its children's) and recorded at or after
        ``since`` (journal time), when given (a read that writes nothing)."""
        ...

    def list_live_leases(self, parent_id: str) -> Sequence[Lease]:
        """The leases on the delivery ``parent_id`` and its children that have not expired by
        the journal clock, with their holders and expiry: until when a lost run's lease still
        blocks a takeover (`dpone delivery inspect`, the resume preview)."""
        ...

    def journal_epoch(self, environment_id: str) -> int: ...

    def mutation_gate(self, environment_id: str) -> MutationGate: ...

    def gate_status(self, environment_id: str) -> MutationGateStatus:
        """The gate, its epoch, and who last changed it and why (a read that creates nothing:
        a journal never gated stands OPEN at epoch 0)."""
        ...

    def revocation_status(self, environment_id: str) -> RevocationStatus:
        """The environment's deny-only revocation list and its newest audited changes (a read
        that creates nothing)."""
        ...

    def payload_retention(self, environment_id: str) -> RetentionPlan:
        """Which sealed payload keys of the environment's deliveries retention lets go now and
        which stay, and why, by the journal clock (a read that writes nothing)."""
        ...


class JournalMetricsView(Protocol):
    """The journal's numbers for `dpone metrics serve` (read-only, kept apart from the views a
    delivery uses: only the metrics exporter holds it)."""

    def metrics_snapshot(self, environment_id: str) -> JournalMetricsSnapshot:
        """One consistent read of the environment's journal in one read-only transaction, every
        age by the journal clock (:mod:`dpone.contracts.journal_metrics`). Environment-wide: a
        platform operator's view across every operation namespace of the environment, which
        names no operation, digest or namespace."""
        ...


class SupervisorJournal(JournalReads, Protocol):
    """What a delivery run uses of the journal: admission, leases, attempts, guarded
    transitions, rate turns and the frontier (the supervisor's one writer,
    ``dpone.executor.supervisor._journal_writer``, is typed against this and nothing more)."""

    def admit_parent(self, request: ParentAdmission) -> AdmissionResult: ...

    def acquire_lease(self, operation_id: str, kind: LeaseKindName, holder: str,
                      ttl_seconds: int) -> Lease: ...

    def release_lease(self, lease: Lease) -> None: ...

    def renew_lease(self, lease: Lease, ttl_seconds: int) -> Lease:
        """A heartbeat: extend a lease its holder still holds to ``ttl_seconds`` from now by
        the journal clock (same token); ``journal.lease_lost`` once it expired or was taken."""

    def begin_attempt(self, operation_id: str, holder: str, ttl_seconds: int, *,
                      rate: RateTurnRequest | None = None) -> SubmitLease:
        """``acquire_lease`` of the mutation lease on ``operation_id`` and, when the child is
        due now, ``plan_attempt`` under it, in one transaction (refused as either refuses).
        With ``rate``, an attempt planned there also takes the request's turn (and its
        active-request slot, claimed on the lease just taken) as ``take_rate_turn`` would."""
        ...

    def plan_attempt(self, operation_id: str, lease: Lease, *,
                     takeover: bool = False) -> AttemptPlan:
        """The next attempt of ``operation_id`` under its held mutation ``lease``.

        ``takeover=True`` plans the same-key replay of a submit a lost run left without an
        outcome (another lease entered it): refused with ``REST_DELIVERY_UNSAFE_RETRY`` unless
        the parent was admitted with a certified key retention that covers the age of the
        child's first attempt by the journal clock, within the admitted attempts; the plan's
        ``takeover_age_s`` is that age."""
        ...

    def enter_submitting(self, attempt: AttemptPlan, marker_digest: str, lease: Lease,
                         expected_revision: int, *, fenced_replay: bool = False
                         ) -> ChildOperation:
        """The one critical SUBMITTING transaction for a planned, marker-bound attempt.

        ``fenced_replay=False`` enters from ``sealed`` (``sealed_submit``) or ``retry_wait``
        (``retry_wait_due``). ``fenced_replay=True`` asserts that the plan's mutation fence is
        certified in this environment and the replay budget remains: it re-enters from
        ``submitting`` (``submitting_fenced_replay``) or ``submitting_fenced_replay``
        (``replay_again``), only under the mutation lease that entered the latest attempt,
        recording that attempt's outcome and releasing its reservation in the same transaction.
        """
        ...

    def record_orphan_marker(self, attempt: AttemptPlan, orphan_digest: str, lease: Lease,
                             expected_revision: int) -> ChildOperation:
        """The planned ``attempt``'s marker key already holds another marker (``orphan_digest``,
        planned in another journal epoch): one critical transaction finalizes the SEALED or
        RETRY_WAIT child with an UNKNOWN effect (``*_orphan_marker_found``), consumes the
        orphan's attempt ordinal and records it as an attempt row. Nothing is ever sent under
        that ordinal; only a reconciliation proves the effect."""
        ...

    def transition(self, request: TransitionRequest,
                   lease: Lease | LeaseClaim) -> ChildOperation:
        """One guarded transition under a held ``Lease``, or under a ``LeaseClaim`` taken and
        released inside the same transaction."""
        ...

    def settle_response(self, request: TransitionRequest, lease: Lease, *,
                        verification: TransitionRequest | None = None,
                        verification_lease: LeaseClaim | None = None
                        ) -> tuple[ChildOperation, ...]:
        """One critical transaction that records a submit answer (``request``, under the held
        mutation ``lease``), then, when given, the verification that answer proves on its own
        (``verification`` under ``verification_lease``, a claim; its expected revision is the
        one the recorded answer produced), and releases ``lease``. Nothing of it commits unless
        all of it does. Returns the child as each step left it."""
        ...

    def promote_frontier(self, parent_id: str, lease: Lease | LeaseClaim) -> int:
        """Extend the contiguous checkpoint frontier under a held checkpoint ``Lease``, or under
        a ``LeaseClaim`` taken and released inside the same transaction."""
        ...

    def take_rate_turn(self, request: RateTurnRequest) -> RateTurn:
        """One short transaction: the next request turn of the receiver account's shared
        bucket (``dpone.contracts.rate``) and, for a submit, one of its active-request slots; or
        nothing when the turn is beyond ``request.max_wait_s`` or every slot is held."""
        ...

    def release_active_slot(self, slot: ActiveSlot) -> None:
        """Free a slot :meth:`take_rate_turn` granted (a no-op once it expired and was taken)."""
        ...

class DeliveryJournalPort(DeliveryJournalView, SupervisorJournal, Protocol):
    """Admission, transitions, leases, the pre-submit critical transaction and checkpointing;
    operator reconciliation and audit, the environment's gates and retention."""

    def record_operator_action(self, action: OperatorActionRecord) -> OperatorAction:
        """Append one audit row ``operator_<command>`` (durably, in its own transaction)."""
        ...

    def reconcile(self, request: ReconcileRequest, lease: Lease) -> ChildOperation:
        """One operator reconciliation in one critical transaction under the live operator
        ``lease``: the open and resolve contract transitions as a CAS on
        ``request.expected_revision``, the remote-job slot released when the effect is proven
        applied or not applied (kept while unknown, partial or still running), and the
        ``operator_reconcile`` audit row. A refusal changes nothing."""
        ...

    def set_mutation_gate(self, environment_id: str, gate: MutationGate, *, epoch: int,
                          actor: str, reason: str) -> None: ...

    def set_revocation(self, environment_id: str, target: RevocationTarget, *, revoked: bool,
                       actor: str, reason: str) -> bool:
        """Revoke (``revoked=True``) or unrevoke ``target`` in one audited critical transaction
        serialized with every SUBMITTING transaction; True when the list changed, False when
        it already stood so (nothing written)."""
        ...

    def expire_payloads(self, environment_id: str, *, actor: str) -> RetentionPlan:
        """Decide the retention plan again in one critical transaction, mark every eligible
        parent's payloads expired and append its ``operator_prune`` audit row (actor, keys
        deleted, keys kept); the caller then deletes the plan's ``delete`` keys."""
        ...


class RestTransportPort(Protocol):
    """Send one request to the bound receiver; never raises for network outcomes."""

    def send(self, request: OutboundRequest) -> TransportOutcome: ...

    def close(self) -> None: ...


class CredentialResolver(Protocol):
    """Turn a binding into the credential its auth provider needs, or refuse
    (``credential.unavailable``); the value never leaves the process."""

    def resolve(self, binding: ConnectionBinding) -> Credential: ...


class Clock(Protocol):
    """The worker's clocks: elapsed time for budgets, wall time for what it reports, and sleep.

    Due times the journal compares with its own clock come from the journal (``now`` of the
    journal ports), never from here.
    """

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (only differences mean anything)."""
        ...

    def now(self) -> dt.datetime:
        """The wall clock, aware UTC."""
        ...

    def sleep(self, seconds: float) -> None: ...
