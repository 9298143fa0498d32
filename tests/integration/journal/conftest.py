"""The journal contract suite's fixtures: one journal per adapter, a fresh store per test.

``journal`` is parametrized by adapter name (``ADAPTERS``); each factory builds an empty,
migrated journal for one test. A PostgreSQL test gets its own randomly named schema
(``search_path`` set through the DSN's ``options``), migrated from scratch and dropped after.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator

import psycopg
import pytest
from _journal_support import ENVIRONMENT
from psycopg import sql
from psycopg.conninfo import make_conninfo

from dpone.contracts.journal import DeliveryJournalPort
from dpone.journal.postgres import PostgresJournal


@pytest.fixture
def journal_dsn(postgres_dsn: str) -> Iterator[str]:
    """A DSN whose search_path is a fresh, migrated schema of its own."""
    schema = "journal_" + secrets.token_hex(6)
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    dsn = make_conninfo(postgres_dsn, options=f"-c search_path={schema},public")
    migrating = PostgresJournal(dsn, environment_id=ENVIRONMENT)
    migrating.migrate()
    migrating.close()
    try:
        yield dsn
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def _postgres(request: pytest.FixtureRequest) -> Iterator[DeliveryJournalPort]:
    adapter = PostgresJournal(request.getfixturevalue("journal_dsn"), environment_id=ENVIRONMENT)
    try:
        yield adapter
    finally:
        adapter.close()


ADAPTERS: dict[str, Callable[[pytest.FixtureRequest], Iterator[DeliveryJournalPort]]] = {
    "postgres": _postgres,
}


@pytest.fixture(params=sorted(ADAPTERS))
def journal(request: pytest.FixtureRequest) -> Iterator[DeliveryJournalPort]:
    yield from ADAPTERS[request.param](request)
