"""``PostgresJournal``: the production DeliveryJournalPort over PostgreSQL 15+ (psycopg 3).

Each method is one transaction (``run_transaction``); the policy lives in the shared journal
(``dpone.journal._port`` and the transactions of ``dpone.journal._tx``). Leases
and every timestamp come from the database clock; effect domains are serialized by row locks
(``SELECT ... FOR UPDATE`` on the domain lock row). With ``require_durability=True`` every
critical transaction (admission, SUBMITTING, transitions, promotion, gate changes) commits with
``synchronous_commit = remote_apply`` and only while a synchronous standby streams. A write of
non-critical state only (a lease taken, renewed or released, an attempt planned, a submit turn)
commits with ``synchronous_commit = off``, as the SQLite journal commits those without a sync:
the WAL is flushed in order, so the next critical commit makes them durable, and each critical
transaction reads again the lease it relies on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from dpone.contracts._errors import DponeError
from dpone.journal._port import JournalBase, TransactionKind
from dpone.journal._unit import UnitOfWork
from dpone.journal.postgres._connection import (
    ConnectionSource,
    OwnConnection,
    apply_migrations,
    display_dsn,
    dsn_password,
    run_transaction,
)

_T = TypeVar("_T")


class PostgresJournal(JournalBase):
    """The delivery journal in one PostgreSQL schema, scoped to one environment."""

    def __init__(self, dsn: str | None = None, *, environment_id: str,
                 require_durability: bool = False, pool: ConnectionSource | None = None,
                 operation_namespace: str | None = None) -> None:
        if pool is None and not dsn:
            raise DponeError(code="journal.unavailable",
                             message="a PostgreSQL journal needs a DSN or a connection pool")
        self.environment_id = environment_id
        self.operation_namespace = operation_namespace
        self.require_durability = require_durability
        self._own: OwnConnection | None = None
        self._source: ConnectionSource
        self._where = display_dsn(dsn) if pool is None and dsn else "a connection pool"
        self._secret = dsn_password(dsn) if pool is None and dsn else None
        if pool is not None:
            self._source = pool
        else:
            self._own = OwnConnection(dsn or "")
            self._source = self._own

    def _run(self, work: Callable[[UnitOfWork], _T], kind: TransactionKind) -> _T:
        """Reads run plain; writes of non-critical state (leases, attempt plans, submit turns)
        commit without waiting for their WAL flush; critical ones wait for it, and pass the
        durability gate if required."""
        return run_transaction(self._source, self.environment_id, work,
                               durable=kind == "critical" and self.require_durability,
                               synced=kind != "write", where=self._where, secret=self._secret)

    def migrate(self) -> tuple[int, ...]:
        """Apply pending migrations (idempotent; a changed migration is refused)."""
        return apply_migrations(self._source, where=self._where, secret=self._secret)

    def close(self) -> None:
        if self._own is not None:
            self._own.close()


if TYPE_CHECKING:
    from dpone.contracts.journal_identity import JournalIdentityPort
    from dpone.contracts.ports import DeliveryJournalPort, DeliveryJournalView, JournalMetricsView

    _port: DeliveryJournalPort = PostgresJournal("postgresql://", environment_id="dev")
    _view: DeliveryJournalView = PostgresJournal("postgresql://", environment_id="dev")
    _identity: JournalIdentityPort = PostgresJournal("postgresql://", environment_id="dev")
    _metrics: JournalMetricsView = PostgresJournal("postgresql://", environment_id="dev")
