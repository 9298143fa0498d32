"""A damaged journal file, a file that is not a database and driver failures: each is a catalog
error that names the file and carries the driver's own message, never a bare driver class."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dpone.contracts import DponeError
from dpone.journal.sqlite import SqliteJournal, _connection
from support.journal import ENVIRONMENT, admission, complete_full

PAGE_SIZE_OFFSET = 16


def corrupt_pages(path: Path) -> None:
    """Overwrite the body of every page after the first (the header and schema stay intact)."""
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[PAGE_SIZE_OFFSET:PAGE_SIZE_OFFSET + 2], "big")
    assert len(data) >= 3 * page_size, "the journal is too small to damage"
    for start in range(page_size, len(data), page_size):
        data[start:start + page_size] = b"\xa5\x5a" * (page_size // 2)
    path.write_bytes(bytes(data))


@pytest.fixture
def delivered_path(journal_path: Path) -> Path:
    """A journal that has admitted a delivery and completed a child, closed (WAL checkpointed)."""
    journal = SqliteJournal(journal_path, environment_id=ENVIRONMENT)
    parent = journal.admit_parent(admission([(0, 10), (10, 20)])).parent
    complete_full(journal, parent.children[0].operation_id)
    journal.close()
    assert not journal_path.with_name(journal_path.name + "-wal").exists()
    return journal_path


def test_a_damaged_journal_is_refused_for_reads_and_admission(delivered_path: Path) -> None:
    corrupt_pages(delivered_path)
    damaged = delivered_path.read_bytes()

    for act in (lambda j: j.journal_epoch(ENVIRONMENT),
                lambda j: j.admit_parent(admission([(20, 30)], route="route-b")),
                lambda j: j.migrate()):
        journal = SqliteJournal(delivered_path, environment_id=ENVIRONMENT)
        with pytest.raises(DponeError) as excinfo:
            act(journal)
        journal.close()
        error = excinfo.value
        assert error.code == "journal.corrupt"
        assert error.exit_code == 3
        assert str(delivered_path) in error.message
        assert error.details["path"] == str(delivered_path)
        assert "backup" in error.fix_hint and "never delete" in error.fix_hint
    assert delivered_path.read_bytes() == damaged


def test_a_file_that_is_not_a_database_says_so(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    path.write_text("deliveries: not a database\n" * 200, encoding="utf-8")

    journal = SqliteJournal(path, environment_id=ENVIRONMENT)
    with pytest.raises(DponeError) as excinfo:
        journal.migrate()
    journal.close()

    assert excinfo.value.code == "journal.corrupt"
    assert excinfo.value.message == (f"{path} is not a SQLite database (file is not a database); "
                                     "it cannot be a delivery journal")
    assert path.read_text(encoding="utf-8").startswith("deliveries:")


def test_an_intact_journal_is_checked_once_per_open(delivered_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[Path] = []
    real = _connection.check_integrity
    monkeypatch.setattr(_connection, "check_integrity",
                        lambda conn, path: (checked.append(path), real(conn, path))[1])
    journal = SqliteJournal(delivered_path, environment_id=ENVIRONMENT)

    journal.journal_epoch(ENVIRONMENT)
    parent = journal.admit_parent(admission([(20, 30)], route="route-b")).parent
    journal.load_parent(parent.parent_id)
    assert checked == [delivered_path]
    journal.close()
    journal.journal_epoch(ENVIRONMENT)
    journal.close()
    assert checked == [delivered_path, delivered_path]


def test_a_locked_journal_names_the_driver_message_and_the_file(journal_path: Path) -> None:
    holder = sqlite3.connect(journal_path, isolation_level=None, timeout=0.1)
    holder.execute("BEGIN IMMEDIATE")
    journal = SqliteJournal(journal_path, environment_id=ENVIRONMENT, busy_timeout_seconds=0.05)
    try:
        with pytest.raises(DponeError) as excinfo:
            journal.admit_parent(admission([(0, 10)]))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        journal.close()

    assert excinfo.value.code == "journal.unavailable"
    assert excinfo.value.message.endswith(
        f"database is locked (sqlite3.OperationalError) at {journal_path}")


def test_an_unopenable_journal_names_the_driver_message_and_the_file(tmp_path: Path) -> None:
    directory = tmp_path / "journal.sqlite3"
    directory.mkdir()
    journal = SqliteJournal(directory, environment_id=ENVIRONMENT)

    with pytest.raises(DponeError) as excinfo:
        journal.journal_epoch(ENVIRONMENT)

    assert excinfo.value.code == "journal.unavailable"
    assert excinfo.value.message == (
        f"unable to open database file (sqlite3.OperationalError) at {directory}")
