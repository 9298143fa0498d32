"""``PostgresJournal``: the production DeliveryJournalPort over PostgreSQL 15+ (psycopg 3).

Each method is one transaction (``run_transaction``); the policy lives in the step modules
(``_admission``, ``_submit``, ``_transition``) and the pure core. Leases and every timestamp
come from the database clock. With ``require_durability=True`` every critical transaction
(admission, SUBMITTING, transitions, promotion, gate changes) commits with
``synchronous_commit = remote_apply`` and only while a synchronous standby streams.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from dpone.compiler.design_contract import load_state_contract
from dpone.contracts._errors import DponeError
from dpone.contracts.journal import (
    AdmissionResult,
    AttemptPlan,
    ChildOperation,
    Lease,
    LeaseKindName,
    MutationGate,
    ParentAdmission,
    ParentOperation,
    Tenancy,
    TransitionRequest,
)
from dpone.contracts.state import StateContract
from dpone.journal.postgres import _admission, _submit, _transition
from dpone.journal.postgres._connection import (
    ConnectionSource,
    OwnConnection,
    Tx,
    apply_migrations,
    run_transaction,
)
from dpone.journal.postgres._ops import audit, environment, live_lease, require_child
from dpone.journal.postgres._rows import child_model, parent_model

_T = TypeVar("_T")

LEASE_KINDS = frozenset({"mutation", "observation", "checkpoint", "operator"})
MAX_LEASE_TTL_SECONDS = 86_400


class PostgresJournal:
    """The delivery journal in one PostgreSQL schema, scoped to one environment."""

    def __init__(self, dsn: str | None = None, *, environment_id: str,
                 require_durability: bool = False, pool: ConnectionSource | None = None) -> None:
        if pool is None and not dsn:
            raise DponeError(code="journal.unavailable",
                             message="a PostgreSQL journal needs a DSN or a connection pool")
        self.environment_id = environment_id
        self.require_durability = require_durability
        self._own: OwnConnection | None = None
        self._source: ConnectionSource
        if pool is not None:
            self._source = pool
        else:
            self._own = OwnConnection(dsn or "")
            self._source = self._own

    @property
    def contract(self) -> StateContract:
        return load_state_contract()

    def _read(self, work: Callable[[Tx], _T]) -> _T:
        return run_transaction(self._source, self.environment_id, work)

    def _write(self, work: Callable[[Tx], _T]) -> _T:
        return run_transaction(self._source, self.environment_id, work,
                               durable=self.require_durability)

    def migrate(self) -> tuple[int, ...]:
        """Apply pending migrations (idempotent; a changed migration is refused)."""
        return apply_migrations(self._source)

    def close(self) -> None:
        if self._own is not None:
            self._own.close()

    def _scoped(self, environment_id: str) -> None:
        if environment_id != self.environment_id:
            raise DponeError(code="journal.not_found",
                             message=f"environment {environment_id!r} is outside this journal's "
                             f"scope ({self.environment_id!r})")

    # -- read-only view ------------------------------------------------------------------------

    def load_parent(self, parent_id: str) -> ParentOperation:
        return self._read(lambda tx: _admission.load(tx, parent_id))

    def find_parent(self, tenancy: Tenancy, parent_plan_digest: str) -> ParentOperation | None:
        self._scoped(tenancy.environment_id)

        def work(tx: Tx) -> ParentOperation | None:
            row = tx.one("find_parent", operation_namespace=tenancy.operation_namespace,
                         tenant_id=tenancy.tenant_id, parent_plan_digest=parent_plan_digest)
            if row is None:
                return None
            return parent_model(row, tx.all("children_of_parent", parent_id=row["parent_id"]))

        return self._read(work)

    def get_child(self, operation_id: str) -> ChildOperation:
        return self._read(
            lambda tx: child_model(require_child(tx, operation_id)))

    def list_attempts(self, operation_id: str) -> Sequence[Mapping[str, Any]]:
        return self._read(
            lambda tx: tx.all("list_attempts", operation_id=operation_id))

    def list_observations(self, operation_id: str) -> Sequence[Mapping[str, Any]]:
        return self._read(
            lambda tx: tx.all("list_observations", operation_id=operation_id))

    def _environment_row(self, environment_id: str) -> dict[str, Any] | None:
        self._scoped(environment_id)
        return self._read(lambda tx: tx.one("get_environment"))

    def journal_epoch(self, environment_id: str) -> int:
        row = self._environment_row(environment_id)
        return int(row["journal_epoch"]) if row else 0

    def mutation_gate(self, environment_id: str) -> MutationGate:
        row = self._environment_row(environment_id)
        return "BLOCKED" if row and row["mutation_gate"] == "BLOCKED" else "OPEN"

    # -- admission, leases, attempts, transitions ----------------------------------------------

    def admit_parent(self, request: ParentAdmission) -> AdmissionResult:
        _admission.validate(request, self.environment_id)
        contract = self.contract
        return self._write(lambda tx: _admission.admit(tx, contract, request))

    def acquire_lease(self, operation_id: str, kind: LeaseKindName, holder: str,
                      ttl_seconds: int) -> Lease:
        if kind not in LEASE_KINDS or not 0 < ttl_seconds <= MAX_LEASE_TTL_SECONDS or not holder:
            raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                             message="a lease needs a known kind, a holder and a TTL in "
                             f"1..{MAX_LEASE_TTL_SECONDS} seconds")

        def work(tx: Tx) -> Lease:
            epoch, _gate = environment(tx)
            if tx.one("operation_exists", operation_id=operation_id) is None:
                raise DponeError(code="journal.not_found", operation_id=operation_id,
                                 message=f"no operation {operation_id} in this environment")
            row = tx.one("acquire_lease", operation_id=operation_id, kind=kind, holder=holder,
                         journal_epoch=epoch, ttl_seconds=ttl_seconds)
            if row is None:
                raise DponeError(code="journal.lease_held", operation_id=operation_id,
                                 message=f"another worker holds the {kind} lease")
            return Lease(operation_id=row["operation_id"], kind=row["kind"], holder=row["holder"],
                         token=int(row["token"]), expires_at=row["expires_at"])

        return self._read(work)

    def release_lease(self, lease: Lease) -> None:
        self._read(lambda tx: tx.run("release_lease", operation_id=lease.operation_id,
                                     kind=lease.kind, holder=lease.holder, token=lease.token))

    def plan_attempt(self, operation_id: str, lease: Lease) -> AttemptPlan:
        return self._read(lambda tx: _submit.plan_attempt(tx, operation_id, lease))

    def enter_submitting(self, attempt: AttemptPlan, marker_digest: str, lease: Lease,
                         expected_revision: int) -> ChildOperation:
        contract = self.contract
        return self._write(lambda tx: _submit.enter_submitting(
            tx, contract, attempt, marker_digest, lease, expected_revision))

    def transition(self, request: TransitionRequest, lease: Lease) -> ChildOperation:
        contract = self.contract
        return self._write(
            lambda tx: _transition.transition(tx, contract, request, lease))

    def promote_frontier(self, parent_id: str, lease: Lease) -> int:
        contract = self.contract
        return self._write(lambda tx: _transition.promote(tx, contract, parent_id, lease))

    def repair_reservation(self, attempt_id: str, *, actor: str = "journal.repair") -> bool:
        """Release an orphan capacity reservation; True when it was released."""
        return self._write(lambda tx: _submit.repair_reservation(tx, attempt_id, actor))

    def check_lease(self, lease: Lease) -> None:
        """Raise ``journal.lease_lost`` unless ``lease`` is still held (database clock)."""
        self._read(lambda tx: live_lease(tx, lease))

    def set_mutation_gate(self, environment_id: str, gate: MutationGate, *, epoch: int,
                          actor: str, reason: str) -> None:
        self._scoped(environment_id)
        if gate not in ("OPEN", "BLOCKED"):
            raise DponeError(code="journal.illegal_transition", message=f"unknown gate {gate!r}")

        def work(tx: Tx) -> None:
            tx.run("ensure_environment")
            row = tx.one("lock_environment") or {}
            current, current_gate = int(row.get("journal_epoch", 0)), row.get("mutation_gate")
            if epoch < current or (gate == "OPEN" and current_gate == "BLOCKED"
                                   and epoch <= current):
                raise DponeError(code="journal.revision_conflict",
                                 message=f"epoch {epoch} cannot follow {current}: epochs never "
                                 "decrease and reopening a BLOCKED gate needs a new epoch")
            tx.run("set_environment_gate", gate=gate, epoch=epoch, reason=reason, actor=actor)
            audit(tx, {"operation_id": environment_id}, actor=actor,
                  transition_id=f"mutation_gate_{gate.lower()}", from_state=current_gate,
                  to_state=gate, revision=epoch, digests={"reason": reason})

        self._write(work)


if TYPE_CHECKING:
    from dpone.contracts.journal import DeliveryJournalPort, DeliveryJournalView

    _port: DeliveryJournalPort = PostgresJournal("postgresql://", environment_id="dev")
    _view: DeliveryJournalView = PostgresJournal("postgresql://", environment_id="dev")
