"""Connections, transactions, migrations and the driver-error edge of the PostgreSQL journal.

Every journal call runs one function inside one transaction (``run_transaction``). A
serialization failure or deadlock re-runs the whole transaction a bounded number of times;
every other driver error is translated here, by SQLSTATE, into a catalog ``DponeError``
raised ``from`` the original, with the driver's message and where the journal is (its DSN shown
without a password: ``display_dsn``), so nothing above this module sees a psycopg exception.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Final, Protocol, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg.types.json import Jsonb

from dpone.contracts._errors import DponeError
from dpone.journal._environment import database_now
from dpone.journal._rows import RowCodec
from dpone.journal._sql import Migration, apply_pending, query
from dpone.journal.postgres._codec import CODEC

DIALECT = "postgres"
RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})
MAX_TRANSACTION_RUNS = 6

_T = TypeVar("_T")

_CONSTRAINT_CODES = {
    "rest_delivery_child_delivery_key": "REST_DELIVERY_INTENT_CONFLICT",
    "rest_delivery_attempt_ordinal": "journal.revision_conflict",
    "rest_delivery_attempt_pkey": "journal.revision_conflict",
    "rest_delivery_capacity_reservation_pkey": "journal.revision_conflict",
    "rest_delivery_capacity_active_slot": "journal.capacity_exhausted",
    "rest_delivery_watermark_no_overlap": "journal.revision_conflict",
}
_RETRYABLE_CONSTRAINTS = frozenset({"rest_delivery_parent_pkey", "rest_delivery_parent_plan_key",
                                    "rest_delivery_effect_domain_lock_pkey"})


def display_dsn(dsn: str) -> str:
    """Where a DSN points, for people: ``postgresql://user@host:port/dbname``, never a password
    or connection options."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.Error:
        return "postgresql://(unparsable DSN)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host') or ''}{port}/{parts.get('dbname') or ''}"


def dsn_password(dsn: str) -> str | None:
    try:
        password = conninfo_to_dict(dsn).get("password")
    except psycopg.Error:
        return None
    return str(password) if password else None


class ConnectionSource(Protocol):
    """Anything that lends a connection, e.g. a ``psycopg_pool.ConnectionPool``."""

    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...


OWN_CONNECTIONS: Final = 4
"""Connections a journal opens for itself at most: children in flight at once (and their lease
heartbeats) run their transactions side by side, as separate processes would."""


class OwnConnection:
    """Up to ``size`` lazily opened autocommit connections, each lent to one caller at a time."""

    def __init__(self, dsn: str, size: int = OWN_CONNECTIONS) -> None:
        self._dsn = dsn
        self._size = size
        self._lock = threading.Condition()
        self._idle: list[psycopg.Connection[Any]] = []
        self._opened = 0

    def _take(self) -> psycopg.Connection[Any] | None:
        """An idle connection, or None when the caller may open one; waits when all are lent."""
        with self._lock:
            while True:
                while self._idle:
                    conn = self._idle.pop()
                    if not (conn.closed or conn.broken):
                        return conn
                    self._opened -= 1
                if self._opened < self._size:
                    self._opened += 1
                    return None
                self._lock.wait()

    def _give_back(self, conn: psycopg.Connection[Any] | None) -> None:
        with self._lock:
            if conn is None or conn.closed or conn.broken:
                self._opened -= 1
            else:
                self._idle.append(conn)
            self._lock.notify()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        conn = self._take()
        try:
            if conn is None:
                conn = psycopg.connect(self._dsn, autocommit=True)
            yield conn
        finally:
            if conn is not None and conn.broken:
                conn.close()
            self._give_back(conn)

    def close(self) -> None:
        with self._lock:
            for conn in self._idle:
                conn.close()
            self._opened -= len(self._idle)
            self._idle.clear()


_AS_IS = frozenset({str, int, float, bool, bytes, type(None), dt.date, dt.datetime})
"""Parameter types psycopg binds as they are (checked by exact type: the common case is cheap)."""


def _bind(value: Any) -> Any:
    """Python values as psycopg binds them: mappings as ``jsonb``."""
    if type(value) in _AS_IS:
        return value
    return Jsonb(dict(value)) if isinstance(value, Mapping) else value


def _batch_value(value: Any) -> Any:
    """Dates and timestamps inside a batch as ISO text (the batch query casts them back)."""
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"a batch row holds a {type(value).__name__}, not a JSON value")


def _batch_json(value: Any) -> str:
    return json.dumps(value, default=_batch_value, separators=(",", ":"))


class Tx:
    """One open transaction (the dialect's ``UnitOfWork``): named queries, rows as dicts."""

    codec: RowCodec = CODEC

    def __init__(self, cursor: psycopg.Cursor[DictRow], environment_id: str) -> None:
        self.cursor = cursor
        self.environment_id = environment_id

    def _bound(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"environment_id": self.environment_id,
                **{key: _bind(value) for key, value in params.items()}}

    def _execute(self, name: str, params: Mapping[str, Any]) -> None:
        self.cursor.execute(query(DIALECT, name), self._bound(params))

    def one(self, name: str, /, **params: Any) -> dict[str, Any] | None:
        self._execute(name, params)
        return self.cursor.fetchone()

    def all(self, name: str, /, **params: Any) -> list[dict[str, Any]]:
        self._execute(name, params)
        return self.cursor.fetchall()

    def run(self, name: str, /, **params: Any) -> int:
        self._execute(name, params)
        return self.cursor.rowcount

    def run_many(self, name: str, rows: Sequence[Mapping[str, Any]], /) -> int:
        """One statement, one round trip: the rows travel as one ``jsonb`` array (``rows``)."""
        if not rows:
            return 0
        batch = Jsonb([dict(row) for row in rows], dumps=_batch_json)
        self.cursor.execute(query(DIALECT, name),
                            {"environment_id": self.environment_id, "rows": batch})
        return self.cursor.rowcount

    def statement(self, name: str) -> None:
        """A parameterless statement (SET LOCAL, DDL)."""
        self.cursor.execute(query(DIALECT, name))

    def cas_audited(self, cas: Mapping[str, Any], audit: Mapping[str, Any]
                    ) -> dict[str, Any] | None:
        """The revision CAS and its audit row in one statement (``cas_child_audited``)."""
        return self.one("cas_child_audited", **{**cas, **audit})

    def now(self) -> dt.datetime:
        """The database clock (never the worker clock)."""
        return database_now(self)

    def lock_domains(self, domains: Iterable[str]) -> bool:
        """Lock the effect-domain lock rows (created when missing), always in canonical (sorted)
        order."""
        for domain in sorted(set(domains)):
            if self.one("lock_domain", domain=domain) is None:
                self.run("create_domain_lock", domain=domain)
                self.one("lock_domain", domain=domain)
        return True


def durability_gate(tx: Tx) -> None:
    """Commit this transaction with remote_apply, and only while a sync standby streams."""
    tx.statement("durability_remote_apply")
    setting = tx.one("durability_setting") or {}
    standbys = tx.one("durability_standbys") or {}
    if (setting.get("synchronous_commit") != "remote_apply" or not setting.get("standby_names")
            or int(standbys.get("standbys", 0)) < 1):
        raise DponeError(code="journal.durability_unavailable",
                         message="no streaming synchronous standby acknowledges remote_apply "
                         "commits; a critical transition is refused",
                         details={"synchronous_commit": setting.get("synchronous_commit"),
                                  "streaming_sync_standbys": standbys.get("standbys")})


def driver_text(error: psycopg.Error, secret: str | None = None) -> str:
    """The driver's message on one line, with ``secret`` (the DSN's password) masked."""
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    if secret:
        text = text.replace(secret, "***")
    return text or "no message"


def translate(error: psycopg.Error, where: str | None = None,
              secret: str | None = None) -> DponeError:
    """The catalog error for a driver error (by SQLSTATE and constraint name), with the driver's
    message and, when known, where the journal is (``where``: a password-free display)."""
    state = error.sqlstate or ""
    constraint = getattr(error.diag, "constraint_name", None)
    text = driver_text(error, secret)
    at = f" at {where}" if where else ""
    detail = {"sqlstate": state or None, "constraint": constraint, "message": text,
              **({"journal": where} if where else {})}
    if state.startswith("23"):
        code = _CONSTRAINT_CODES.get(constraint or "", "journal.illegal_transition")
        return DponeError(code=code, message=f"the journal refused the write ({constraint})",
                          details=detail)
    if state in RETRYABLE_SQLSTATES:
        return DponeError(code="journal.revision_conflict",
                          message="the journal transaction kept conflicting with other workers",
                          details=detail)
    if state == "42P01":
        return DponeError(code="journal.unavailable", details=detail,
                          message=f"the journal schema is missing{at}: apply the migrations "
                          f"({text})")
    return DponeError(code="journal.unavailable", details=detail,
                      message=f"{text} (psycopg.{type(error).__name__}){at}")


def _retryable(error: psycopg.Error) -> bool:
    if error.sqlstate in RETRYABLE_SQLSTATES:
        return True
    return (error.sqlstate == "23505"
            and getattr(error.diag, "constraint_name", None) in _RETRYABLE_CONSTRAINTS)


def run_transaction(source: ConnectionSource, environment_id: str, work: Callable[[Tx], _T], *,
                    durable: bool = False, synced: bool = True, where: str | None = None,
                    secret: str | None = None) -> _T:
    """Run ``work`` in one transaction; re-run it on serialization failures and deadlocks.

    ``synced=False``: a write of non-critical state, committed without waiting for its WAL
    flush (``synchronous_commit = off`` for this transaction). WAL is flushed in order, so the
    next synchronous commit makes it durable too; a crash of the server can lose only the
    newest of these writes, never a critical transaction. ``where`` (a password-free display of
    the journal) and ``secret`` (the password to mask in driver messages) only shape the error
    a failure becomes.
    """
    for run in range(MAX_TRANSACTION_RUNS):
        try:
            with source.connection() as conn, conn.transaction(), \
                    conn.cursor(row_factory=dict_row) as cursor:
                tx = Tx(cursor, environment_id)
                if durable:
                    durability_gate(tx)
                elif not synced:
                    tx.statement("commit_unsynced")
                return work(tx)
        except psycopg.Error as error:
            if _retryable(error) and run + 1 < MAX_TRANSACTION_RUNS:
                time.sleep(random.uniform(0, 0.01 * 2 ** run))
                continue
            raise translate(error, where, secret) from error
    raise DponeError(code="journal.revision_conflict",
                     message="the journal transaction kept conflicting with other workers")


def apply_migrations(source: ConnectionSource, *, where: str | None = None,
                     secret: str | None = None) -> tuple[int, ...]:
    """Apply the numbered migrations not yet recorded; refuse a changed checksum."""

    def work(tx: Tx) -> tuple[int, ...]:
        tx.one("migration_lock")
        tx.statement("migration_table")

        def execute(migration: Migration) -> None:
            tx.cursor.execute(migration.text)

        return apply_pending(tx, DIALECT, execute)

    return run_transaction(source, "", work, where=where, secret=secret)
