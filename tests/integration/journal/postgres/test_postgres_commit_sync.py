"""PostgreSQL commits: every critical transaction waits for its WAL flush (the server's
``synchronous_commit``); a write of lease, attempt-planning or submit-turn state only commits
without waiting (``synchronous_commit = off`` for that transaction alone), and the session is
back at the server's setting right after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dpone.journal.postgres import PostgresJournal
from support.journal import ENVIRONMENT


@pytest.fixture
def pg(journal_dsn: str) -> Iterator[PostgresJournal]:
    journal = PostgresJournal(journal_dsn, environment_id=ENVIRONMENT)
    yield journal
    journal.close()


def _synchronous_commit_inside(pg: PostgresJournal, kind: str) -> str:
    def show(tx: object) -> str:
        cursor = tx.cursor  # type: ignore[attr-defined]
        cursor.execute("SHOW synchronous_commit")
        return str(cursor.fetchone()["synchronous_commit"])

    return pg._run(show, kind)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kind", "expected"),
                         [("critical", "on"), ("read", "on"), ("write", "off")])
def test_only_non_critical_writes_commit_without_waiting_for_the_flush(
        pg: PostgresJournal, kind: str, expected: str) -> None:
    assert _synchronous_commit_inside(pg, kind) == expected
    assert _synchronous_commit_inside(pg, "critical") == "on"  # SET LOCAL: this transaction only

