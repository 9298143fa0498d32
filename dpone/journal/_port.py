"""``JournalBase``: the DeliveryJournalPort methods every dialect shares.

Each method is one transaction: a read, or one of the journal's transactions in ``_tx``. A
dialect subclass supplies only ``_run`` (one transaction of a given kind over its driver),
``migrate`` and ``close``. ``read`` transactions only read; ``write`` transactions write state
that is not critical (leases, attempt planning); ``critical`` transactions are the ones the
spec makes durable (admission, SUBMITTING, transitions, promotion, gate changes, repairs).
"""

from __future__ import annotations

import datetime as dt
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from dpone.contracts._errors import DponeError
from dpone.contracts.design import load_state_contract
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
from dpone.contracts.journal_identity import EnvironmentIdentity, JournalIdentity
from dpone.contracts.journal_metrics import JournalMetricsSnapshot
from dpone.contracts.rate import ActiveSlot, RateTurn, RateTurnRequest
from dpone.contracts.retention import RetentionPlan
from dpone.contracts.revocation import RevocationStatus, RevocationTarget
from dpone.contracts.state import StateContract
from dpone.journal import _governance as governance
from dpone.journal import _identity
from dpone.journal import _metrics as metrics
from dpone.journal import _operator as operator
from dpone.journal import _rate as rate
from dpone.journal import _retention as retention
from dpone.journal._cas import audit
from dpone.journal._environment import environment, stored_environment
from dpone.journal._leases import (
    MAX_LEASE_TTL_SECONDS,
    acquire,
    admitted_lease_refusal,
    check_lease_request,
    holding,
    live_lease,
    live_leases,
    release,
    renew,
)
from dpone.journal._lookup import parent_operation, require_child
from dpone.journal._models import attempt_view, child_model, delivery_summaries, observation_view
from dpone.journal._rows import EnvironmentRow, ParentRow, gate_status
from dpone.journal._tenancy import check_owned, check_reservation_owned, check_tenancy
from dpone.journal._tx import admit, orphan, promote, reconcile, repair, submit, transition
from dpone.journal._unit import UnitOfWork

_T = TypeVar("_T")

TransactionKind = Literal["read", "write", "critical"]
MAX_LISTED_DELIVERIES = 10_000


class JournalBase(ABC):
    """The delivery journal of one environment over a dialect's transactions."""

    environment_id: str
    operation_namespace: str | None = None
    """The caller's operation namespace when it is known: an operation of another namespace is
    refused by every method that takes its id (``_tenancy``); None scopes by environment id."""

    @functools.cached_property
    def _owned_parents(self) -> set[str]:
        """Parents already found in ``operation_namespace`` (immutable: read once each)."""
        return set()

    @abstractmethod
    def _run(self, work: Callable[[UnitOfWork], _T], kind: TransactionKind) -> _T:
        """Run ``work`` in one transaction of ``kind``: the dialect's only obligation."""

    @property
    def contract(self) -> StateContract:
        return load_state_contract()

    def _owned(self, operation_ids: Sequence[str],
               work: Callable[[UnitOfWork], _T]) -> Callable[[UnitOfWork], _T]:
        """``work`` preceded, in its transaction, by the refusal of another namespace's
        operation."""
        namespace = self.operation_namespace
        known = self._owned_parents

        def owned(tx: UnitOfWork) -> _T:
            for operation_id in operation_ids:
                check_owned(tx, namespace, operation_id, known)
            return work(tx)

        return owned

    def _scoped(self, environment_id: str) -> None:
        if environment_id != self.environment_id:
            raise DponeError(code="journal.not_found",
                             message=f"environment {environment_id!r} is outside this journal's "
                             f"scope ({self.environment_id!r})")

    # -- identity (JournalIdentityPort) --------------------------------------------------------

    def journal_identity(self) -> JournalIdentity:
        return self._run(_identity.identity, "read")

    def record_environment(self, identity: EnvironmentIdentity) -> JournalIdentity:
        return self._run(lambda tx: _identity.record(tx, identity), "write")

    # -- read-only view ------------------------------------------------------------------------

    def load_parent(self, parent_id: str) -> ParentOperation:
        return self._run(self._owned([parent_id], lambda tx: admit.load(tx, parent_id)), "read")

    def find_parent(self, tenancy: Tenancy, parent_plan_digest: str) -> ParentOperation | None:
        self._scoped(tenancy.environment_id)
        check_tenancy(self.operation_namespace, tenancy)

        def work(tx: UnitOfWork) -> ParentOperation | None:
            row = tx.one("find_parent", operation_namespace=tenancy.operation_namespace,
                         tenant_id=tenancy.tenant_id, parent_plan_digest=parent_plan_digest)
            if row is None:
                return None
            return parent_operation(tx, ParentRow.decode(tx.codec, row))

        return self._run(work, "read")

    def check_admitted_leases(self, tenancy: Tenancy, plan_digest: str,
                              boundary_from: dt.date, boundary_to: dt.date) -> None:
        self._scoped(tenancy.environment_id)
        check_tenancy(self.operation_namespace, tenancy)

        def work(tx: UnitOfWork) -> None:
            refusal = admitted_lease_refusal(tx, tenancy, plan_digest, boundary_from, boundary_to)
            if refusal is not None:
                raise refusal

        self._run(work, "read")

    def get_child(self, operation_id: str) -> ChildOperation:
        return self._run(self._owned(
            [operation_id], lambda tx: child_model(require_child(tx, operation_id))), "read")

    def list_attempts(self, operation_id: str) -> Sequence[Mapping[str, Any]]:
        return self._run(self._owned([operation_id], lambda tx: [
            attempt_view(tx.codec, row)
            for row in tx.all("list_attempts", operation_id=operation_id)]), "read")

    def list_observations(self, operation_id: str) -> Sequence[Mapping[str, Any]]:
        return self._run(self._owned([operation_id], lambda tx: [
            observation_view(tx.codec, row)
            for row in tx.all("list_observations", operation_id=operation_id)]), "read")

    def list_deliveries(self, limit: int) -> Sequence[DeliverySummary]:
        if not 1 <= limit <= MAX_LISTED_DELIVERIES:
            raise DponeError(code="input.invalid_argument",
                             message=f"a delivery listing holds 1..{MAX_LISTED_DELIVERIES} "
                             f"deliveries, not {limit}")
        namespace = self.operation_namespace
        return self._run(lambda tx: delivery_summaries(tx.codec, tx.all(
            "list_deliveries", limit=limit, operation_namespace=namespace)), "read")

    def list_operator_actions(self, operation_ids: Sequence[str]) -> Sequence[OperatorAction]:
        return self._run(self._owned(
            operation_ids, lambda tx: operator.listed(tx, operation_ids)), "read")

    def list_audit(self, *, operation_id: str | None = None, since: dt.datetime | None = None,
                   limit: int) -> Sequence[AuditRecord]:
        def listed(tx: UnitOfWork) -> list[AuditRecord]:
            return operator.audit_records(tx, operation_id=operation_id, since=since,
                                          limit=limit)

        # One operation's trail is its namespace's; the whole trail is the environment's.
        return self._run(self._owned([operation_id], listed) if operation_id else listed, "read")

    def list_live_leases(self, parent_id: str) -> Sequence[Lease]:
        return self._run(self._owned([parent_id], lambda tx: live_leases(tx, parent_id)),
                         "read")

    def _environment_row(self, environment_id: str) -> EnvironmentRow | None:
        self._scoped(environment_id)
        return self._run(stored_environment, "read")

    def journal_epoch(self, environment_id: str) -> int:
        row = self._environment_row(environment_id)
        return row.journal_epoch if row else 0

    def mutation_gate(self, environment_id: str) -> MutationGate:
        row = self._environment_row(environment_id)
        return "BLOCKED" if row and row.mutation_gate == "BLOCKED" else "OPEN"

    def gate_status(self, environment_id: str) -> MutationGateStatus:
        self._scoped(environment_id)

        def work(tx: UnitOfWork) -> MutationGateStatus:
            row = tx.one("environment_gate")
            if row is None:
                return MutationGateStatus(environment_id=environment_id, mutation_gate="OPEN",
                                          journal_epoch=0)
            return gate_status(tx.codec, environment_id, row)

        return self._run(work, "read")

    def revocation_status(self, environment_id: str) -> RevocationStatus:
        self._scoped(environment_id)
        return self._run(lambda tx: governance.status(tx, environment_id), "read")

    def payload_retention(self, environment_id: str) -> RetentionPlan:
        self._scoped(environment_id)
        return self._run(lambda tx: retention.plan(tx, environment_id), "read")

    def metrics_snapshot(self, environment_id: str) -> JournalMetricsSnapshot:
        """Environment-wide (every namespace's deliveries): the metrics exporter's view."""
        self._scoped(environment_id)
        return self._run(lambda tx: metrics.snapshot(tx, environment_id), "read")

    def now(self) -> dt.datetime:
        """The database clock, aware UTC: the clock every lease and due time is decided by."""
        return self._run(lambda tx: tx.now(), "read").astimezone(dt.UTC)

    # -- admission, leases, attempts, transitions ----------------------------------------------

    def admit_parent(self, request: ParentAdmission) -> AdmissionResult:
        admit.validate(request, self.environment_id)
        check_tenancy(self.operation_namespace, request.tenancy)
        contract = self.contract
        return self._run(lambda tx: admit.admit(tx, contract, request), "critical")

    def acquire_lease(self, operation_id: str, kind: LeaseKindName, holder: str,
                      ttl_seconds: int) -> Lease:
        check_lease_request(operation_id, kind, holder, ttl_seconds)
        return self._run(self._owned([operation_id], lambda tx: acquire(
            tx, operation_id, kind, holder, ttl_seconds, environment(tx).journal_epoch)), "write")

    def release_lease(self, lease: Lease) -> None:
        self._run(self._owned([lease.operation_id], lambda tx: release(tx, lease)), "write")

    def renew_lease(self, lease: Lease, ttl_seconds: int) -> Lease:
        if not 0 < ttl_seconds <= MAX_LEASE_TTL_SECONDS:
            raise DponeError(code="journal.illegal_transition", operation_id=lease.operation_id,
                             message=f"a lease TTL is 1..{MAX_LEASE_TTL_SECONDS} seconds")
        return self._run(self._owned(
            [lease.operation_id], lambda tx: renew(tx, lease, ttl_seconds)), "write")

    def record_operator_action(self, action: OperatorActionRecord) -> OperatorAction:
        return self._run(self._owned(
            [action.operation_id], lambda tx: operator.record(tx, action)), "critical")

    def begin_attempt(self, operation_id: str, holder: str, ttl_seconds: int, *,
                      rate: RateTurnRequest | None = None) -> SubmitLease:
        check_lease_request(operation_id, "mutation", holder, ttl_seconds)
        return self._run(self._owned([operation_id], lambda tx: submit.begin_attempt(
            tx, operation_id, holder, ttl_seconds, rate)), "write")

    def plan_attempt(self, operation_id: str, lease: Lease, *,
                     takeover: bool = False) -> AttemptPlan:
        return self._run(self._owned([operation_id], lambda tx: submit.plan_attempt(
            tx, operation_id, lease, takeover=takeover)), "write")

    def enter_submitting(self, attempt: AttemptPlan, marker_digest: str, lease: Lease,
                         expected_revision: int, *, fenced_replay: bool = False) -> ChildOperation:
        contract = self.contract
        return self._run(self._owned([attempt.operation_id], lambda tx: submit.enter_submitting(
            tx, contract, attempt, marker_digest, lease, expected_revision,
            fenced_replay=fenced_replay)), "critical")

    def record_orphan_marker(self, attempt: AttemptPlan, orphan_digest: str, lease: Lease,
                             expected_revision: int) -> ChildOperation:
        contract = self.contract
        return self._run(self._owned([attempt.operation_id], lambda tx: (
            orphan.record_orphan_marker(tx, contract, attempt, orphan_digest, lease,
                                        expected_revision))), "critical")

    def transition(self, request: TransitionRequest,
                   lease: Lease | LeaseClaim) -> ChildOperation:
        contract = self.contract
        return self._run(self._owned(
            [request.operation_id, lease.operation_id], lambda tx: holding(
                tx, lease, lambda held, taken: transition.transition(
                    tx, contract, request, held, taken_epoch=taken))), "critical")

    def settle_response(self, request: TransitionRequest, lease: Lease, *,
                        verification: TransitionRequest | None = None,
                        verification_lease: LeaseClaim | None = None
                        ) -> tuple[ChildOperation, ...]:
        contract = self.contract
        return self._run(self._owned([request.operation_id], lambda tx: transition.settle_response(
            tx, contract, request, lease, verification, verification_lease)), "critical")

    def reconcile(self, request: ReconcileRequest, lease: Lease) -> ChildOperation:
        contract = self.contract
        return self._run(self._owned(
            [request.operation_id, lease.operation_id],
            lambda tx: reconcile.reconcile(tx, contract, request, lease)), "critical")

    def promote_frontier(self, parent_id: str, lease: Lease | LeaseClaim) -> int:
        contract = self.contract
        return self._run(self._owned([parent_id, lease.operation_id], lambda tx: holding(
            tx, lease, lambda held, taken: promote.promote(
                tx, contract, parent_id, held, taken_epoch=taken))), "critical")

    def repair_reservation(self, attempt_id: str, *, actor: str = "journal.repair") -> bool:
        """Release an orphan capacity reservation; True when it was released."""
        namespace = self.operation_namespace

        def work(tx: UnitOfWork) -> bool:
            check_reservation_owned(tx, namespace, attempt_id)
            return repair.repair_reservation(tx, attempt_id, actor)

        return self._run(work, "critical")

    def check_lease(self, lease: Lease) -> None:
        """Raise ``journal.lease_lost`` unless ``lease`` is still held (database clock)."""
        self._run(self._owned([lease.operation_id], lambda tx: live_lease(tx, lease)), "read")

    def set_mutation_gate(self, environment_id: str, gate: MutationGate, *, epoch: int,
                          actor: str, reason: str) -> None:
        self._scoped(environment_id)
        if gate not in ("OPEN", "BLOCKED"):
            raise DponeError(code="journal.illegal_transition", message=f"unknown gate {gate!r}")

        def work(tx: UnitOfWork) -> None:
            current = environment(tx, lock="update")
            if epoch < current.journal_epoch or (
                    gate == "OPEN" and current.mutation_gate == "BLOCKED"
                    and epoch <= current.journal_epoch):
                raise DponeError(code="journal.revision_conflict",
                                 message=f"epoch {epoch} cannot follow {current.journal_epoch}: "
                                 "epochs never decrease and reopening a BLOCKED gate needs a "
                                 "new epoch")
            tx.run("set_environment_gate", gate=gate, epoch=epoch, reason=reason, actor=actor)
            audit(tx, operation_id=environment_id, actor=actor,
                  transition_id=f"mutation_gate_{gate.lower()}",
                  from_state=current.mutation_gate, to_state=gate, revision=epoch,
                  digests={"reason": reason})

        self._run(work, "critical")

    def set_revocation(self, environment_id: str, target: RevocationTarget, *, revoked: bool,
                       actor: str, reason: str) -> bool:
        self._scoped(environment_id)
        return self._run(lambda tx: governance.change(
            tx, environment_id, target, revoked=revoked, actor=actor, reason=reason), "critical")
    # -- distributed rate limits (``dpone.journal._rate``) -----------------------------------

    def take_rate_turn(self, request: RateTurnRequest) -> RateTurn:
        return self._run(lambda tx: rate.take_turn(tx, request), "write")

    def release_active_slot(self, slot: ActiveSlot) -> None:
        self._run(lambda tx: rate.release_slot(tx, slot), "write")

    def expire_payloads(self, environment_id: str, *, actor: str) -> RetentionPlan:
        self._scoped(environment_id)
        return self._run(lambda tx: retention.expire_parents(tx, environment_id, actor=actor),
                         "critical")
