"""SQLite commits: every critical transaction syncs its commit (``synchronous=FULL``); a write of
lease or attempt-planning state only commits without a sync of its own (``NORMAL``), and the
connection is back at FULL right after it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.journal.sqlite import SqliteJournal
from support.journal import ENVIRONMENT

FULL, NORMAL = 2, 1


@pytest.fixture
def lite(journal_path: Path) -> Iterator[SqliteJournal]:
    journal = SqliteJournal(journal_path, environment_id=ENVIRONMENT)
    yield journal
    journal.close()


def _synchronous_inside(lite: SqliteJournal, kind: str) -> int:
    return int(lite._run(lambda tx: tx.conn.execute(  # type: ignore[attr-defined]
        "PRAGMA synchronous").fetchone()[0], kind))  # type: ignore[arg-type]


@pytest.mark.parametrize(("kind", "expected"),
                         [("critical", FULL), ("read", FULL), ("write", NORMAL)])
def test_only_non_critical_writes_commit_without_a_sync(lite: SqliteJournal, kind: str,
                                                        expected: int) -> None:
    assert _synchronous_inside(lite, kind) == expected
    with lite._db.connection() as conn:
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == FULL


def test_a_failed_lease_write_leaves_the_connection_at_full(lite: SqliteJournal) -> None:
    def refuse(_tx: object) -> None:
        raise RuntimeError("refused inside the transaction")

    with pytest.raises(RuntimeError):
        lite._run(refuse, "write")
    assert _synchronous_inside(lite, "critical") == FULL
