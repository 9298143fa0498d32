"""The database file, transactions, migrations and the driver-error edge of the SQLite journal.

Every journal call runs one function inside one transaction (``run_transaction``). A writing
transaction starts with ``BEGIN IMMEDIATE``: it takes the database write lock up front, so one
writer at a time linearizes admission and the pre-submit critical transaction (the SQLite form
of the PostgreSQL effect-domain row lock). ``SQLITE_BUSY`` re-runs the whole transaction a
bounded number of times with backoff and then becomes ``journal.unavailable``; every other
driver error is translated here into a catalog ``DponeError`` raised ``from`` the original, with
the driver's own message and the file's path, so nothing above this module sees a sqlite3
exception.

Every commit of a critical transaction (admission, SUBMITTING, transitions, promotion, gate
changes, repairs) is synced to disk (``synchronous=FULL``, the connection's setting). A
transaction that writes only non-critical state (a lease taken or released, an attempt planned)
commits with ``synchronous=NORMAL``: no sync of its own. In WAL mode commits are appended in
order and the next synced commit syncs everything before it, so a power loss can roll back only
the newest of these lease writes, never a critical transaction; and each critical transaction
reads again the lease it relies on.

Every connection checks the file once when it opens (``PRAGMA quick_check``): a damaged journal
or a file that is not a SQLite database at all is refused as ``journal.corrupt`` before anything
reads or writes it.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from dpone.contracts._errors import DponeError
from dpone.journal._environment import database_now
from dpone.journal._rows import RowCodec
from dpone.journal._sql import Migration, apply_pending, query
from dpone.journal.sqlite._codec import CODEC, moment_text

DIALECT = "sqlite"
MAX_TRANSACTION_RUNS = 6
BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
INTEGRITY_FINDINGS_SHOWN = 3

_T = TypeVar("_T")

_CONSTRAINT_CODES = {
    "rest_delivery_child.operation_namespace, rest_delivery_child.delivery_key":
        "REST_DELIVERY_INTENT_CONFLICT",
    "rest_delivery_parent.operation_namespace, rest_delivery_parent.parent_plan_digest":
        "REST_DELIVERY_INTENT_CONFLICT",
    "rest_delivery_attempt.operation_id, rest_delivery_attempt.attempt_ordinal":
        "journal.revision_conflict",
    "rest_delivery_attempt.attempt_id": "journal.revision_conflict",
    "rest_delivery_capacity_reservation.attempt_id": "journal.revision_conflict",
    "rest_delivery_capacity_reservation.effect_conflict_domain, "
    "rest_delivery_capacity_reservation.slot": "journal.capacity_exhausted",
    "rest_delivery_watermark_no_overlap": "journal.revision_conflict",
}


_AS_IS = frozenset({str, int, float, bool, bytes, type(None)})
"""Parameter types SQLite binds as they are (checked by exact type: the common case is cheap)."""


def _bind(value: Any) -> Any:
    """Python values as stored: dates and timestamps as ISO text, mappings as JSON text."""
    if type(value) in _AS_IS:
        return value
    if isinstance(value, dt.datetime):
        return moment_text(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


class Tx:
    """One open transaction (the dialect's ``UnitOfWork``): named queries, rows as dicts."""

    codec: RowCodec = CODEC

    def __init__(self, conn: sqlite3.Connection, environment_id: str) -> None:
        self.conn = conn
        self.environment_id = environment_id

    def _bound(self, params: Mapping[str, Any]) -> dict[str, Any]:
        bound = {key: _bind(value) for key, value in params.items()}
        bound.setdefault("environment_id", self.environment_id)
        return bound

    def _execute(self, name: str, params: Mapping[str, Any]) -> sqlite3.Cursor:
        return self.conn.execute(query(DIALECT, name), self._bound(params))

    def one(self, name: str, /, **params: Any) -> dict[str, Any] | None:
        cursor = self._execute(name, params)
        row = cursor.fetchone()
        cursor.fetchall()  # finish a RETURNING statement so its effect is complete
        return dict(row) if row is not None else None

    def all(self, name: str, /, **params: Any) -> list[dict[str, Any]]:
        return [dict(row) for row in self._execute(name, params).fetchall()]

    def run(self, name: str, /, **params: Any) -> int:
        return self._execute(name, params).rowcount

    def run_many(self, name: str, rows: Sequence[Mapping[str, Any]], /) -> int:
        """``executemany``: one prepared statement stepped once per row, in process."""
        if not rows:
            return 0
        return self.conn.executemany(query(DIALECT, name),
                                     [self._bound(row) for row in rows]).rowcount

    def cas_audited(self, cas: Mapping[str, Any], audit: Mapping[str, Any]
                    ) -> dict[str, Any] | None:
        """The revision CAS, then the audit row of the transition it committed (the new
        revision, namespace and tenant from the updated row); None when it matched no row."""
        row = self.one("cas_child", **cas)
        if row is not None:
            self.run("insert_audit", revision=row["revision"],
                     operation_namespace=row["operation_namespace"],
                     tenant_id=row["tenant_id"], **audit)
        return row

    def now(self) -> dt.datetime:
        """The database clock (never the worker clock)."""
        return database_now(self)

    def lock_domains(self, domains: Iterable[str]) -> bool:
        """Nothing to take: ``BEGIN IMMEDIATE`` already serializes every writer of every domain."""
        return False


class Database:
    """One lazily opened connection to the journal file, lent to one caller at a time."""

    def __init__(self, path: Path, busy_timeout_seconds: float) -> None:
        self.path = path
        self.busy_timeout_seconds = busy_timeout_seconds
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_seconds,
                               isolation_level=None, check_same_thread=False)
        try:
            conn.row_factory = sqlite3.Row
            check_integrity(conn, self.path)
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise DponeError(code="journal.unavailable",
                                 message=f"the SQLite journal {self.path} cannot use WAL mode "
                                 f"(journal_mode={mode}); use a file on a local disk")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                self._conn = self._open()
            yield self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _primary_code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def is_busy(error: sqlite3.Error) -> bool:
    return _primary_code(error) in BUSY_CODES


def corrupt(path: Path, message: str, details: Mapping[str, Any]) -> DponeError:
    """``journal.corrupt`` naming the file: restore it from a backup, never delete it."""
    return DponeError(code="journal.corrupt", message=message,
                      details={**details, "path": str(path)})


def check_integrity(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a journal file that fails ``PRAGMA quick_check`` (run once per connection)."""
    findings = [str(row[0]) for row in
                conn.execute(f"PRAGMA quick_check({INTEGRITY_FINDINGS_SHOWN})").fetchall()]
    if findings != ["ok"]:
        lines = [line for finding in findings for line in finding.splitlines()
                 if line and not line.startswith("***")][:INTEGRITY_FINDINGS_SHOWN]
        raise corrupt(path, f"the SQLite journal {path} is damaged: its integrity check "
                      f"(quick_check) reports {'; '.join(lines) or 'errors'}",
                      {"findings": lines})


def translate(error: sqlite3.Error, path: Path | None = None) -> DponeError:
    """The catalog error for a driver error (by result code and constraint), with the driver's
    message and, when known, the journal file."""
    name = getattr(error, "sqlite_errorname", None)
    text = str(error)
    where = f" at {path}" if path is not None else ""
    driver = f"{text} (sqlite3.{type(error).__name__}){where}"
    detail = {"sqlite_error": name, "message": text,
              **({"path": str(path)} if path is not None else {})}
    if isinstance(error, sqlite3.IntegrityError):
        constraint = text.split(": ", 1)[-1]
        code = _CONSTRAINT_CODES.get(constraint, "journal.illegal_transition")
        return DponeError(code=code, message=f"the journal refused the write ({constraint})",
                          details=detail)
    if _primary_code(error) == sqlite3.SQLITE_NOTADB and path is not None:
        return corrupt(path, f"{path} is not a SQLite database ({text}); it cannot be "
                       "a delivery journal", detail)
    if _primary_code(error) in CORRUPT_CODES and path is not None:
        return corrupt(path, f"the SQLite journal {path} is damaged: {text} "
                       f"(sqlite3.{type(error).__name__})",
                       detail)
    if is_busy(error):
        return DponeError(code="journal.unavailable", details=detail,
                          message=f"the SQLite journal stayed locked by another writer: {driver}")
    if "no such table" in text:
        return DponeError(code="journal.unavailable", details=detail,
                          message=f"the journal schema is missing{where}: apply the migrations "
                          f"({text})")
    return DponeError(code="journal.unavailable", details=detail, message=driver)


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


@contextmanager
def _commit_sync(conn: sqlite3.Connection, synced: bool) -> Iterator[None]:
    """Commit without a sync of its own unless ``synced``; the connection is left at FULL."""
    if synced:
        yield
        return
    conn.execute("PRAGMA synchronous=NORMAL")
    try:
        yield
    finally:
        conn.execute("PRAGMA synchronous=FULL")


def run_transaction(db: Database, environment_id: str, work: Callable[[Tx], _T], *,
                    write: bool, synced: bool = True) -> _T:
    """Run ``work`` in one transaction; re-run it while another writer keeps the file busy.

    ``synced=False``: a write of non-critical state, committed without a sync of its own.
    """
    for run in range(MAX_TRANSACTION_RUNS):
        try:
            with db.connection() as conn, _commit_sync(conn, synced or not write):
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN DEFERRED")
                try:
                    result = work(Tx(conn, environment_id))
                    conn.execute("COMMIT")
                except BaseException:
                    _rollback(conn)
                    raise
                return result
        except sqlite3.Error as error:
            if is_busy(error) and run + 1 < MAX_TRANSACTION_RUNS:
                time.sleep(random.uniform(0, 0.01 * 2 ** run))
                continue
            raise translate(error, db.path) from error
    raise DponeError(code="journal.unavailable", details={"path": str(db.path)},
                     message=f"the SQLite journal stayed locked by another writer at {db.path}")


def _statements(text: str) -> Iterator[str]:
    """The complete statements of a migration (triggers keep their inner semicolons)."""
    buffer: list[str] = []
    for line in text.splitlines(keepends=True):
        buffer.append(line)
        candidate = "".join(buffer)
        if sqlite3.complete_statement(candidate):
            yield candidate
            buffer = []
    rest = "".join(buffer).strip()
    if rest and not all(line.strip().startswith("--") or not line.strip()
                        for line in rest.splitlines()):
        raise DponeError(code="journal.unavailable",
                         message="a migration ends with an incomplete statement")


def apply_migrations(db: Database) -> tuple[int, ...]:
    """Apply the numbered migrations not yet recorded; refuse a changed checksum."""

    def work(tx: Tx) -> tuple[int, ...]:
        tx.run("migration_table")

        def execute(migration: Migration) -> None:
            for statement in _statements(migration.text):
                tx.conn.execute(statement)

        return apply_pending(tx, DIALECT, execute)

    return run_transaction(db, "", work, write=True)
