"""``SqliteJournal``: the local-development DeliveryJournalPort over one SQLite file.

The same behaviour as the PostgreSQL journal (the port methods live in the shared
``dpone.journal._port``) with the SQLite forms of its mechanisms: WAL mode,
``synchronous=FULL`` for every critical commit (lease and attempt-planning writes commit
without a sync of their own) and foreign keys on every connection; ``BEGIN IMMEDIATE`` (one
writer at a time) in place of effect-domain row locks; overlap by comparison in place of GiST ``&&``; the
database clock (``strftime``/``julianday('now')``) for every lease decision and timestamp. A
production environment tier is refused: SQLite is never a production journal, and it has no
synchronous replication, so there is no ``require_durability``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from dpone.contracts._errors import DponeError
from dpone.journal._port import JournalBase, TransactionKind
from dpone.journal._unit import UnitOfWork
from dpone.journal.sqlite._connection import Database, apply_migrations, run_transaction

_T = TypeVar("_T")

DEFAULT_BUSY_TIMEOUT_SECONDS = 5.0


class SqliteJournal(JournalBase):
    """The delivery journal in one SQLite file, scoped to one environment (development only)."""

    def __init__(self, path: str | Path, *, environment_id: str,
                 environment_tier: Literal["development", "production"] = "development",
                 busy_timeout_seconds: float = DEFAULT_BUSY_TIMEOUT_SECONDS,
                 operation_namespace: str | None = None) -> None:
        if environment_tier != "development":
            raise DponeError(code="journal.sqlite_in_production",
                             message=f"the SQLite journal is for local development; the "
                             f"{environment_tier!r} tier of {environment_id!r} needs the "
                             "PostgreSQL journal", details={"path": str(path)})
        if busy_timeout_seconds <= 0:
            raise DponeError(code="journal.unavailable",
                             message="the SQLite busy timeout must be positive")
        self.environment_id = environment_id
        self.operation_namespace = operation_namespace
        self._db = Database(Path(path), busy_timeout_seconds)

    def _run(self, work: Callable[[UnitOfWork], _T], kind: TransactionKind) -> _T:
        """Reads begin DEFERRED; every writing transaction takes the write lock up front; only
        critical ones sync their commit (``synchronous=FULL``)."""
        return run_transaction(self._db, self.environment_id, work, write=kind != "read",
                               synced=kind == "critical")

    def migrate(self) -> tuple[int, ...]:
        """Apply pending migrations (idempotent; a changed migration is refused)."""
        return apply_migrations(self._db)

    def close(self) -> None:
        self._db.close()


if TYPE_CHECKING:
    from dpone.contracts.journal_identity import JournalIdentityPort
    from dpone.contracts.ports import DeliveryJournalPort, DeliveryJournalView, JournalMetricsView

    _port: DeliveryJournalPort = SqliteJournal("journal.sqlite3", environment_id="dev")
    _view: DeliveryJournalView = SqliteJournal("journal.sqlite3", environment_id="dev")
    _identity: JournalIdentityPort = SqliteJournal("journal.sqlite3", environment_id="dev")
    _metrics: JournalMetricsView = SqliteJournal("journal.sqlite3", environment_id="dev")
