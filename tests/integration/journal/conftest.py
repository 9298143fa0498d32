"""The journal contract suite's fixtures: one journal per adapter, a fresh store per test.

``journal`` is parametrized by adapter name (``ADAPTERS``); each factory builds an empty,
migrated journal for one test. A PostgreSQL test gets its own randomly named schema
(``search_path`` set through the DSN's ``options``), migrated from scratch and dropped after.
``reservations`` reads the capacity reservations of the same store (the port does not expose
them); the SQLite conftest overrides both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest
from _journal_reservations import QUERY, Reservations, reservation_map
from _journal_schema import migrated_schema
from _journal_support import ENVIRONMENT

from dpone.contracts.journal import DeliveryJournalPort
from dpone.journal.postgres import PostgresJournal


@pytest.fixture
def journal_dsn(postgres_dsn: str) -> Iterator[str]:
    """A DSN whose search_path is a fresh, migrated schema of its own."""
    with migrated_schema(postgres_dsn, ENVIRONMENT) as dsn:
        yield dsn


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


@pytest.fixture
def reservations(journal_dsn: str) -> Reservations:
    def read(operation_id: str) -> dict[str, str | None]:
        with psycopg.connect(journal_dsn) as conn:
            return reservation_map(conn.execute(QUERY.format("%s"),
                                                (operation_id,)).fetchall())

    return read
