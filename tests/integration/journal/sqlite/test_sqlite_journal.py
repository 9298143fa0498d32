"""SQLite-only behaviour: development tier only, pragmas, busy handling, migrations, edges."""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.contracts import DponeError
from dpone.journal._cas import apply_decision, guarded
from dpone.journal._lookup import require_child
from dpone.journal._sql import migrations
from dpone.journal.sqlite import SqliteJournal
from dpone.journal.sqlite._connection import Tx, run_transaction, translate
from support.journal import ENVIRONMENT, admission, complete_full, generation


@pytest.fixture
def lite(journal_path: Path) -> Iterator[SqliteJournal]:
    journal = SqliteJournal(journal_path, environment_id=ENVIRONMENT)
    yield journal
    journal.close()


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, timeout=0.1, check_same_thread=False)


def test_production_tier_is_refused_at_construction(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with pytest.raises(DponeError) as excinfo:
        SqliteJournal(path, environment_id="prod", environment_tier="production")
    assert excinfo.value.code == "journal.sqlite_in_production"
    assert excinfo.value.exit_code == 2
    assert not path.exists()


def test_connections_use_wal_full_sync_and_foreign_keys(lite: SqliteJournal,
                                                        journal_path: Path) -> None:
    lite.journal_epoch(ENVIRONMENT)
    with lite._db.connection() as conn:
        pragmas = {name: conn.execute(f"PRAGMA {name}").fetchone()[0]
                   for name in ("journal_mode", "synchronous", "foreign_keys")}
    assert pragmas == {"journal_mode": "wal", "synchronous": 2, "foreign_keys": 1}
    with _raw(journal_path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_migrations_are_idempotent_and_edits_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    journal = SqliteJournal(path, environment_id=ENVIRONMENT)
    assert journal.migrate() == tuple(m.version for m in migrations("sqlite"))
    assert journal.migrate() == ()
    assert SqliteJournal(path, environment_id=ENVIRONMENT).migrate() == ()
    conn = _raw(path)
    conn.execute("UPDATE dpone_schema_migrations SET checksum = 'sha256:edited'")
    conn.close()
    with pytest.raises(DponeError) as edited:
        journal.migrate()
    assert edited.value.code == "journal.unavailable"
    assert edited.value.details["applied"] == "sha256:edited"
    journal.close()


def test_an_unmigrated_file_is_unavailable(tmp_path: Path) -> None:
    journal = SqliteJournal(tmp_path / "empty.sqlite3", environment_id=ENVIRONMENT)
    with pytest.raises(DponeError) as excinfo:
        journal.admit_parent(admission([(0, 10)]))
    assert excinfo.value.code == "journal.unavailable"
    assert "migrations" in excinfo.value.message
    journal.close()


def test_a_held_write_lock_makes_writes_unavailable_but_reads_work(journal_path: Path) -> None:
    journal = SqliteJournal(journal_path, environment_id=ENVIRONMENT,
                            busy_timeout_seconds=0.05)
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    blocker = _raw(journal_path)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(DponeError) as busy:
            journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
        assert busy.value.code == "journal.unavailable"
        assert busy.value.details["sqlite_error"] == "SQLITE_BUSY"
        assert journal.get_child(child.operation_id) == child
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60).token == 1
    journal.close()


def test_a_writer_waits_for_a_short_lock_and_then_commits(journal_path: Path) -> None:
    journal = SqliteJournal(journal_path, environment_id=ENVIRONMENT, busy_timeout_seconds=5)
    blocker = _raw(journal_path)
    blocker.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.3, lambda: blocker.execute("COMMIT"))
    release.start()
    try:
        result = journal.admit_parent(admission([(0, 10)]))
    finally:
        release.join()
        blocker.close()
    assert not result.resumed
    journal.close()


def test_driver_constraint_errors_become_domain_errors(lite: SqliteJournal,
                                                       journal_path: Path) -> None:
    parent = lite.admit_parent(admission([(0, 10)])).parent
    complete_full(lite, parent.children[0].operation_id)
    conn = _raw(journal_path)
    try:
        with pytest.raises(sqlite3.IntegrityError) as overlap:
            conn.execute("INSERT INTO rest_delivery_watermark (effect_conflict_domain, "
                         "scope_from, scope_to, generation_end, correction_revision, "
                         "operation_id) SELECT effect_conflict_domain, '2026-01-05', "
                         "'2026-01-20', generation_end, 0, 'x' FROM rest_delivery_watermark")
        assert translate(overlap.value).code == "journal.revision_conflict"
        conn.execute("INSERT INTO rest_delivery_capacity_reservation (attempt_id, operation_id, "
                     "environment_id, effect_conflict_domain, slot) VALUES "
                     "('a', 'o', 'e', 'd', 1)")
        with pytest.raises(sqlite3.IntegrityError) as slot:
            conn.execute("INSERT INTO rest_delivery_capacity_reservation (attempt_id, "
                         "operation_id, environment_id, effect_conflict_domain, slot) VALUES "
                         "('b', 'o', 'e', 'd', 1)")
        assert translate(slot.value).code == "journal.capacity_exhausted"
    finally:
        conn.close()


def test_fully_applied_replacements_keep_a_merged_watermark_map(lite: SqliteJournal,
                                                                journal_path: Path) -> None:
    parent = lite.admit_parent(admission([(0, 10), (10, 20)], gen=generation(20))).parent
    for child in parent.children:
        complete_full(lite, child.operation_id)
    newer = lite.admit_parent(admission([(5, 15)], gen=generation(20, 1))).parent
    complete_full(lite, newer.children[0].operation_id)
    conn = _raw(journal_path)
    rows = conn.execute("SELECT scope_from, scope_to, correction_revision "
                        "FROM rest_delivery_watermark ORDER BY scope_from").fetchall()
    conn.close()
    assert rows == [("2026-01-01", "2026-01-06", 0), ("2026-01-06", "2026-01-16", 1),
                    ("2026-01-16", "2026-01-21", 0)]
    with pytest.raises(DponeError) as stale:
        lite.admit_parent(admission([(12, 14)], gen=generation(20), route="route-b"))
    assert stale.value.code == "REST_DELIVERY_STALE_GENERATION"


def test_leases_and_markers_read_the_database_clock(lite: SqliteJournal) -> None:
    child = lite.admit_parent(admission([(0, 10)])).parent.children[0]
    before = dt.datetime.now(dt.UTC)
    lease = lite.acquire_lease(child.operation_id, "mutation", "worker-1", 30)
    assert lease.expires_at.tzinfo is not None
    assert dt.timedelta(seconds=29) < lease.expires_at - before < dt.timedelta(seconds=32)
    plan = lite.plan_attempt(child.operation_id, lease)
    created = dt.datetime.fromisoformat(plan.marker["created_at"])
    assert abs(created - before) < dt.timedelta(seconds=5)
    lite.release_lease(lease)
    with pytest.raises(DponeError) as released:
        lite.plan_attempt(child.operation_id, lease)
    assert released.value.code == "journal.lease_lost"


def test_the_cas_predicate_itself_refuses_a_moved_revision(lite: SqliteJournal) -> None:
    child = lite.admit_parent(admission([(0, 10)])).parent.children[0]
    contract = lite.contract

    def work(tx: Tx) -> None:
        row = require_child(tx, child.operation_id)
        decision = guarded(contract, row, "sealed_pre_submit_fence_refused",
                           expected_revision=child.revision, lease_kind="mutation",
                           lease_epoch=0, current_epoch=0,
                           facts={"no_request_sent"})
        tx.conn.execute("UPDATE rest_delivery_child SET revision = revision + 1")
        apply_decision(tx, contract, row, decision, expected_revision=child.revision, epoch=0,
                       actor="worker-1")

    with pytest.raises(DponeError) as excinfo:
        run_transaction(lite._db, ENVIRONMENT, work, write=True)
    assert excinfo.value.code == "journal.revision_conflict"
    assert lite.get_child(child.operation_id) == child


def test_a_file_that_cannot_be_opened_is_unavailable(tmp_path: Path) -> None:
    journal = SqliteJournal(tmp_path / "missing" / "journal.sqlite3", environment_id=ENVIRONMENT)
    with pytest.raises(DponeError) as excinfo:
        journal.migrate()
    assert excinfo.value.code == "journal.unavailable"
