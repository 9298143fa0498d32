"""The journal contract suite's fixtures: one journal per adapter, a fresh store per test.

``journal`` is parametrized over every adapter (``ADAPTERS``: PostgreSQL and SQLite), so each
contract test runs once per dialect with the dialect in its id (``test_x[postgres]``,
``test_x[sqlite]``). Each factory builds an empty, migrated journal for one test: a PostgreSQL
test gets its own randomly named schema (``search_path`` set through the DSN's ``options``),
migrated from scratch and dropped after; a SQLite test gets its own migrated database file
(``journal_path``). ``reservations`` reads the capacity reservations of the same store (the port
does not expose them). Dialect-specific suites live in ``postgres/`` and ``sqlite/``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from dpone.contracts.journal import DeliveryJournalPort
from dpone.journal.postgres import PostgresJournal
from dpone.journal.sqlite import SqliteJournal
from support.journal import ENVIRONMENT
from support.journal_reservations import QUERY, Reservations, reservation_map
from support.journal_schema import migrated_schema


@pytest.fixture
def journal_dsn(postgres_dsn: str) -> Iterator[str]:
    """A DSN whose search_path is a fresh, migrated schema of its own."""
    with migrated_schema(postgres_dsn, ENVIRONMENT) as dsn:
        yield dsn


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    """A freshly migrated SQLite journal file of its own."""
    path = tmp_path / "journal.sqlite3"
    migrating = SqliteJournal(path, environment_id=ENVIRONMENT)
    migrating.migrate()
    migrating.close()
    return path


def _postgres(request: pytest.FixtureRequest) -> PostgresJournal | SqliteJournal:
    return PostgresJournal(request.getfixturevalue("journal_dsn"), environment_id=ENVIRONMENT)


def _sqlite(request: pytest.FixtureRequest) -> PostgresJournal | SqliteJournal:
    return SqliteJournal(request.getfixturevalue("journal_path"), environment_id=ENVIRONMENT)


def _postgres_reservations(request: pytest.FixtureRequest) -> Reservations:
    dsn = request.getfixturevalue("journal_dsn")

    def read(operation_id: str) -> dict[str, str | None]:
        with psycopg.connect(dsn) as conn:
            return reservation_map(conn.execute(QUERY.format("%s"), (operation_id,)).fetchall())

    return read


def _sqlite_reservations(request: pytest.FixtureRequest) -> Reservations:
    path = request.getfixturevalue("journal_path")

    def read(operation_id: str) -> dict[str, str | None]:
        conn = sqlite3.connect(path)
        try:
            return reservation_map(conn.execute(QUERY.format("?"), (operation_id,)).fetchall())
        finally:
            conn.close()

    return read


Adapter = tuple[Callable[[pytest.FixtureRequest], PostgresJournal | SqliteJournal],
                Callable[[pytest.FixtureRequest], Reservations]]

ADAPTERS: dict[str, Adapter] = {
    "postgres": (_postgres, _postgres_reservations),
    "sqlite": (_sqlite, _sqlite_reservations),
}
"""dialect -> (open a migrated journal for one test, read its capacity reservations)."""


@pytest.fixture(params=sorted(ADAPTERS))
def journal_dialect(request: pytest.FixtureRequest) -> str:
    """The dialect of this test's ``journal`` (its id in the test name)."""
    return str(request.param)


@pytest.fixture
def journal(journal_dialect: str, request: pytest.FixtureRequest) -> Iterator[DeliveryJournalPort]:
    adapter = ADAPTERS[journal_dialect][0](request)
    try:
        yield adapter
    finally:
        adapter.close()


@pytest.fixture
def reservations(journal_dialect: str, request: pytest.FixtureRequest) -> Reservations:
    return ADAPTERS[journal_dialect][1](request)
