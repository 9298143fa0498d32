"""The journal contract suite against SQLite: ``journal`` is a fresh, migrated database file.

This fixture overrides the adapter-parametrized ``journal`` (and ``reservations``) of the
parent conftest for the tests in this folder, so the re-exported contract tests run against
``SqliteJournal``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from _journal_reservations import QUERY, Reservations, reservation_map
from _journal_support import ENVIRONMENT

from dpone.contracts.journal import DeliveryJournalPort
from dpone.journal.sqlite import SqliteJournal


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    """A freshly migrated journal file of its own."""
    path = tmp_path / "journal.sqlite3"
    migrating = SqliteJournal(path, environment_id=ENVIRONMENT)
    migrating.migrate()
    migrating.close()
    return path


@pytest.fixture(params=["sqlite"])
def journal(request: pytest.FixtureRequest, journal_path: Path) -> Iterator[DeliveryJournalPort]:
    adapter = SqliteJournal(journal_path, environment_id=ENVIRONMENT)
    try:
        yield adapter
    finally:
        adapter.close()


@pytest.fixture
def reservations(journal_path: Path) -> Reservations:
    def read(operation_id: str) -> dict[str, str | None]:
        conn = sqlite3.connect(journal_path)
        try:
            return reservation_map(conn.execute(QUERY.format("?"),
                                                (operation_id,)).fetchall())
        finally:
            conn.close()

    return read
