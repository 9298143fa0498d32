"""The contract suite runs on every adapter: each ``journal`` is the adapter its test id names."""

from __future__ import annotations

from dpone.contracts.journal import DeliveryJournalPort
from dpone.journal.postgres import PostgresJournal
from dpone.journal.sqlite import SqliteJournal

EXPECTED = {"postgres": PostgresJournal, "sqlite": SqliteJournal}


def test_each_dialect_opens_its_own_adapter(journal_dialect: str,
                                            journal: DeliveryJournalPort) -> None:
    assert type(journal) is EXPECTED[journal_dialect]
