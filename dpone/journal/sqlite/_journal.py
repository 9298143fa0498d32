"""``SqliteJournal``: the local-development DeliveryJournalPort over one SQLite file.

The same behaviour as the PostgreSQL journal with the SQLite forms of its mechanisms: WAL mode,
``synchronous=FULL`` and foreign keys on every connection; ``BEGIN IMMEDIATE`` (one writer at a
time) in place of effect-domain row locks; overlap by comparison in place of GiST ``&&``; the
database clock (``strftime``/``julianday('now')``) for every lease decision and timestamp. Each
method is one transaction; the policy lives in the step modules and the pure core. A production
environment tier is refused: SQLite is never a production journal, and it has no synchronous
replication, so there is no ``require_durability``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

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
from dpone.journal.sqlite import _admission, _submit, _transition
from dpone.journal.sqlite._connection import Database, Tx, apply_migrations, run_transaction
from dpone.journal.sqlite._ops import audit, environment, live_lease, require_child
from dpone.journal.sqlite._rows import (
    attempt_view,
    child_model,
    observation_view,
    parent_model,
    parse_moment,
)

LEASE_KINDS = frozenset({"mutation", "observation", "checkpoint", "operator"})
MAX_LEASE_TTL_SECONDS = 86_400
DEFAULT_BUSY_TIMEOUT_SECONDS = 5.0


class SqliteJournal:
    """The delivery journal in one SQLite file, scoped to one environment (development only)."""

    def __init__(self, path: str | Path, *, environment_id: str,
                 environment_tier: Literal["development", "production"] = "development",
                 busy_timeout_seconds: float = DEFAULT_BUSY_TIMEOUT_SECONDS) -> None:
        if environment_tier != "development":
            raise DponeError(code="journal.sqlite_in_production",
                             message=f"the SQLite journal is for local development; the "
                             f"{environment_tier!r} tier of {environment_id!r} needs the "
                             "PostgreSQL journal", details={"path": str(path)})
        if busy_timeout_seconds <= 0:
            raise DponeError(code="journal.unavailable",
                             message="the SQLite busy timeout must be positive")
        self.environment_id = environment_id
        self._db = Database(Path(path), busy_timeout_seconds)

    @property
    def contract(self) -> StateContract:
        return load_state_contract()

    def _read(self, work: Any) -> Any:
        return run_transaction(self._db, self.environment_id, work, write=False)

    def _write(self, work: Any) -> Any:
        return run_transaction(self._db, self.environment_id, work, write=True)

    def migrate(self) -> tuple[int, ...]:
        """Apply pending migrations (idempotent; a changed migration is refused)."""
        return apply_migrations(self._db)

    def close(self) -> None:
        self._db.close()

    def _scoped(self, environment_id: str) -> None:
        if environment_id != self.environment_id:
            raise DponeError(code="journal.not_found",
                             message=f"environment {environment_id!r} is outside this journal's "
                             f"scope ({self.environment_id!r})")

    # -- read-only view ------------------------------------------------------------------------

    def load_parent(self, parent_id: str) -> ParentOperation:
        result: ParentOperation = self._read(lambda tx: _admission.load(tx, parent_id))
        return result

    def find_parent(self, tenancy: Tenancy, parent_plan_digest: str) -> ParentOperation | None:
        self._scoped(tenancy.environment_id)

        def work(tx: Tx) -> ParentOperation | None:
            row = tx.one("find_parent", operation_namespace=tenancy.operation_namespace,
                         tenant_id=tenancy.tenant_id, parent_plan_digest=parent_plan_digest)
            if row is None:
                return None
            return parent_model(row, tx.all("children_of_parent", parent_id=row["parent_id"]))

        result: ParentOperation | None = self._read(work)
        return result

    def get_child(self, operation_id: str) -> ChildOperation:
        result: ChildOperation = self._read(
            lambda tx: child_model(require_child(tx, operation_id)))
        return result

    def list_attempts(self, operation_id: str) -> Sequence[Mapping[str, Any]]:
        result: list[dict[str, Any]] = self._read(lambda tx: [
            attempt_view(row) for row in tx.all("list_attempts", operation_id=operation_id)])
        return result

    def list_observations(self, operation_id: str) -> Sequence[Mapping[str, Any]]:
        result: list[dict[str, Any]] = self._read(lambda tx: [
            observation_view(row)
            for row in tx.all("list_observations", operation_id=operation_id)])
        return result

    def _environment_row(self, environment_id: str) -> dict[str, Any] | None:
        self._scoped(environment_id)
        result: dict[str, Any] | None = self._read(lambda tx: tx.one("get_environment"))
        return result

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
        result: AdmissionResult = self._write(lambda tx: _admission.admit(tx, contract, request))
        return result

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
                         journal_epoch=epoch, ttl_seconds=int(ttl_seconds))
            if row is None:
                raise DponeError(code="journal.lease_held", operation_id=operation_id,
                                 message=f"another worker holds the {kind} lease")
            return Lease(operation_id=row["operation_id"], kind=row["kind"], holder=row["holder"],
                         token=int(row["token"]), expires_at=parse_moment(row["expires_at"]))

        result: Lease = self._write(work)
        return result

    def release_lease(self, lease: Lease) -> None:
        self._write(lambda tx: tx.run("release_lease", operation_id=lease.operation_id,
                                      kind=lease.kind, holder=lease.holder, token=lease.token))

    def plan_attempt(self, operation_id: str, lease: Lease) -> AttemptPlan:
        result: AttemptPlan = self._write(
            lambda tx: _submit.plan_attempt(tx, operation_id, lease))
        return result

    def enter_submitting(self, attempt: AttemptPlan, marker_digest: str, lease: Lease,
                         expected_revision: int) -> ChildOperation:
        contract = self.contract
        result: ChildOperation = self._write(lambda tx: _submit.enter_submitting(
            tx, contract, attempt, marker_digest, lease, expected_revision))
        return result

    def transition(self, request: TransitionRequest, lease: Lease) -> ChildOperation:
        contract = self.contract
        result: ChildOperation = self._write(
            lambda tx: _transition.transition(tx, contract, request, lease))
        return result

    def promote_frontier(self, parent_id: str, lease: Lease) -> int:
        contract = self.contract
        result: int = self._write(lambda tx: _transition.promote(tx, contract, parent_id, lease))
        return result

    def repair_reservation(self, attempt_id: str, *, actor: str = "journal.repair") -> bool:
        """Release an orphan capacity reservation; True when it was released."""
        result: bool = self._write(lambda tx: _submit.repair_reservation(tx, attempt_id, actor))
        return result

    def renew_check(self, lease: Lease) -> None:
        """Raise ``journal.lease_lost`` unless ``lease`` is still held (database clock)."""
        self._read(lambda tx: live_lease(tx, lease))

    def set_mutation_gate(self, environment_id: str, gate: MutationGate, *, epoch: int,
                          actor: str, reason: str) -> None:
        self._scoped(environment_id)
        if gate not in ("OPEN", "BLOCKED"):
            raise DponeError(code="journal.illegal_transition", message=f"unknown gate {gate!r}")

        def work(tx: Tx) -> None:
            current, current_gate = environment(tx)
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

    _port: DeliveryJournalPort = SqliteJournal("journal.sqlite3", environment_id="dev")
    _view: DeliveryJournalView = SqliteJournal("journal.sqlite3", environment_id="dev")
