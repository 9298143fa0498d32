"""PostgreSQL-adapter specifics: migrations, scoping, the watermark map, capacity repair, audit."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from dpone.contracts import DponeError
from dpone.journal._sql import migrations
from dpone.journal.postgres import PostgresJournal
from dpone.journal.postgres._connection import OwnConnection, Tx, run_transaction
from support.journal import ENVIRONMENT, admission, generation, step, submit


@pytest.fixture
def pg(journal_dsn: str) -> Iterator[PostgresJournal]:
    journal = PostgresJournal(journal_dsn, environment_id=ENVIRONMENT)
    yield journal
    journal.close()


def _rows(dsn: str, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(query, params).fetchall()


def test_migrations_are_idempotent_and_refuse_an_edited_file(journal_dsn: str,
                                                             pg: PostgresJournal) -> None:
    assert pg.migrate() == ()
    applied = _rows(journal_dsn, "SELECT version, checksum FROM dpone_schema_migrations "
                                 "ORDER BY version")
    assert [version for version, _ in applied] == [m.version for m in migrations("postgres")]
    assert all(checksum.startswith("sha256:") for _, checksum in applied)
    with psycopg.connect(journal_dsn, autocommit=True) as conn:
        conn.execute("UPDATE dpone_schema_migrations SET checksum = 'sha256:edited' "
                     "WHERE version = 2")
    with pytest.raises(DponeError) as excinfo:
        pg.migrate()
    assert excinfo.value.code == "journal.unavailable"
    assert "never edited" in excinfo.value.message


def test_an_unmigrated_or_unreachable_journal_is_unavailable(postgres_dsn: str) -> None:
    missing = make_conninfo(postgres_dsn, options="-c search_path=journal_absent")
    with pytest.raises(DponeError) as unmigrated:
        PostgresJournal(missing, environment_id=ENVIRONMENT).get_child("op_v1_x_0001")
    assert unmigrated.value.code == "journal.unavailable"
    unreachable = "postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=2"
    with pytest.raises(DponeError) as down:
        PostgresJournal(unreachable, environment_id=ENVIRONMENT).journal_epoch(ENVIRONMENT)
    assert down.value.code == "journal.unavailable"


def test_rows_are_scoped_to_the_journal_environment(journal_dsn: str,
                                                    pg: PostgresJournal) -> None:
    child = pg.admit_parent(admission([(0, 10)])).parent.children[0]
    other = PostgresJournal(journal_dsn, environment_id="another-environment")
    try:
        with pytest.raises(DponeError) as hidden:
            other.get_child(child.operation_id)
        assert hidden.value.code == "journal.not_found"
        with pytest.raises(DponeError) as foreign:
            other.admit_parent(admission([(20, 30)]))
        assert foreign.value.code == "journal.not_found"
    finally:
        other.close()


def test_durability_is_refused_without_a_synchronous_standby(journal_dsn: str) -> None:
    durable = PostgresJournal(journal_dsn, environment_id=ENVIRONMENT, require_durability=True)
    try:
        with pytest.raises(DponeError) as excinfo:
            durable.admit_parent(admission([(0, 10)]))
        assert excinfo.value.code == "journal.durability_unavailable"
        assert durable.journal_epoch(ENVIRONMENT) == 0
    finally:
        durable.close()


def _full_replace(pg: PostgresJournal, scopes: list[tuple[int, int]], gen_day: int,
                  revision: int, route: str) -> None:
    from support.journal import complete_full  # noqa: PLC0415

    parent = pg.admit_parent(admission(scopes, gen=generation(gen_day, revision),
                                       route=route)).parent
    for child in parent.children:
        complete_full(pg, child.operation_id)


def test_the_watermark_map_stays_normalized(journal_dsn: str, pg: PostgresJournal) -> None:
    _full_replace(pg, [(0, 5), (5, 10)], 10, 0, "route-a")
    _full_replace(pg, [(5, 20)], 10, 1, "route-b")
    marks = _rows(journal_dsn, "SELECT lower(scope), upper(scope), correction_revision "
                  "FROM rest_delivery_watermark ORDER BY lower(scope)")
    jan = dt.date(2026, 1, 1)
    assert marks == [(jan, jan + dt.timedelta(days=5), 0),
                     (jan + dt.timedelta(days=5), jan + dt.timedelta(days=20), 1)]
    with pytest.raises(DponeError) as stale:
        pg.admit_parent(admission([(8, 9)], gen=generation(10, 0), route="route-c"))
    assert stale.value.code == "REST_DELIVERY_STALE_GENERATION"


def test_unknown_effect_keeps_capacity_until_repaired(journal_dsn: str,
                                                     pg: PostgresJournal) -> None:
    parent = pg.admit_parent(admission([(0, 10), (10, 20)], max_remote_jobs=1)).parent
    first, second = (c.operation_id for c in parent.children)
    child, lease = submit(pg, first)
    unknown = step(pg, child, "submitting_may_have_reached_unfenced", "transport",
                   "REQUEST_MAY_HAVE_REACHED_RECEIVER", ["no_certified_fence"], lease)
    assert unknown.axes.remote_effect == "UNKNOWN"
    second_lease = pg.acquire_lease(second, "mutation", "worker-2", 60)
    with pytest.raises(DponeError) as held:
        submit(pg, second, lease=second_lease)
    assert held.value.code == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT"
    [attempt] = pg.list_attempts(first)
    assert attempt["outcome"] == "submitting_may_have_reached_unfenced"
    assert pg.repair_reservation(attempt["attempt_id"]) is False
    with psycopg.connect(journal_dsn, autocommit=True) as conn:
        conn.execute("UPDATE rest_delivery_capacity_reservation SET released_at = now()")
        conn.execute("INSERT INTO rest_delivery_capacity_reservation (attempt_id, operation_id, "
                     "environment_id, effect_conflict_domain, slot) VALUES "
                     "('sha256:orphan', %s, %s, %s, 1)",
                     (first, ENVIRONMENT, parent.effect_conflict_domain))
    with pytest.raises(DponeError) as orphan_held:
        submit(pg, second, lease=second_lease)
    assert orphan_held.value.code == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT"
    assert pg.repair_reservation("sha256:orphan") is True
    assert pg.repair_reservation("sha256:orphan") is False
    assert submit(pg, second, lease=second_lease)[0].state_name == "submitting"
    with pytest.raises(DponeError) as missing:
        pg.repair_reservation("sha256:never-reserved")
    assert missing.value.code == "journal.not_found"


def test_observations_are_bounded_per_operation(pg: PostgresJournal) -> None:
    child, lease = submit(pg, pg.admit_parent(admission([(0, 10)])).parent.children[0]
                          .operation_id)
    child = step(pg, child, "submitting_async_receipt_accepted", "submit_response",
                 "ASYNC_RECEIPT_PERSISTED", ["receipt_persisted"], lease, receipt={"id": "j"})
    observer = pg.acquire_lease(child.operation_id, "observation", "trigger", 60)
    for n in range(70):
        child = step(pg, child, "accepted_poll_queued", "observation", "JOB_QUEUED_OBSERVED",
                     ["observation_recorded"], observer, observation={"poll": n})
    assert child.observation_ordinal == 70
    kept = pg.list_observations(child.operation_id)
    assert [o["observation_ordinal"] for o in kept] == list(range(7, 71))


def test_every_state_change_is_audited(journal_dsn: str, pg: PostgresJournal) -> None:
    child = pg.admit_parent(admission([(0, 10)])).parent.children[0]
    submit(pg, child.operation_id)
    trail = _rows(journal_dsn, "SELECT actor, transition_id, from_state, to_state, revision "
                  "FROM rest_delivery_audit WHERE operation_id = %s ORDER BY audit_id",
                  child.operation_id)
    assert trail == [("journal.admission", "admitted", None, "planned", 0),
                     ("journal.admission", "planned_seal", "planned", "sealed", 1),
                     ("worker-1", "sealed_submit", "sealed", "submitting", 2)]


def test_conflicting_transactions_are_rerun_then_reported(journal_dsn: str) -> None:
    source = OwnConnection(journal_dsn)
    runs: list[int] = []

    def flaky(tx: Tx) -> str:
        runs.append(1)
        if len(runs) < 3:
            raise psycopg.errors.SerializationFailure("could not serialize access")
        return str(tx.now())

    assert run_transaction(source, ENVIRONMENT, flaky)
    assert len(runs) == 3

    def deadlocked(_tx: Tx) -> None:
        raise psycopg.errors.DeadlockDetected("deadlock detected")

    with pytest.raises(DponeError) as excinfo:
        run_transaction(source, ENVIRONMENT, deadlocked)
    assert excinfo.value.code == "journal.revision_conflict"
    assert isinstance(excinfo.value.__cause__, psycopg.errors.DeadlockDetected)
    source.close()


class _PerCallPool:
    """A minimal connection pool: one fresh autocommit connection per call."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.lent = 0

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        self.lent += 1
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            yield conn


def test_a_connection_pool_can_be_injected(journal_dsn: str) -> None:
    pool = _PerCallPool(journal_dsn)
    journal = PostgresJournal(environment_id=ENVIRONMENT, pool=pool)
    parent = journal.admit_parent(admission([(0, 10)])).parent
    assert journal.load_parent(parent.parent_id) == parent
    assert pool.lent == 2


def test_overlap_lookups_use_the_gist_index(journal_dsn: str, pg: PostgresJournal) -> None:
    pg.admit_parent(admission([(n, n + 1) for n in range(30)]))
    with psycopg.connect(journal_dsn, autocommit=True) as conn:
        conn.execute("ANALYZE rest_delivery_child")
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(row[0] for row in conn.execute(
            "EXPLAIN SELECT operation_id FROM rest_delivery_child "
            "WHERE effect_conflict_domain = %s AND scope && daterange(%s, %s, '[)')",
            ("sha256:x", dt.date(2026, 1, 3), dt.date(2026, 1, 5))))
    assert "rest_delivery_child_overlap_idx" in plan


def test_transactions_of_threads_run_side_by_side_on_up_to_four_connections(
        journal_dsn: str) -> None:
    """Children in flight at once run their transactions concurrently (a barrier inside four
    open transactions is passed only when all four are open at once); a fifth caller waits for
    a connection instead of opening a fifth."""
    source = OwnConnection(journal_dsn, size=4)
    inside = threading.Barrier(4, timeout=30)
    backends: list[int] = []

    def work(tx: Tx) -> None:
        backends.append(tx.cursor.connection.info.backend_pid)
        inside.wait()

    threads = [threading.Thread(target=run_transaction, args=(source, ENVIRONMENT, work))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not inside.broken
    assert len(set(backends)) == 4

    held = [source.connection() for _ in range(4)]
    conns = [context.__enter__() for context in held]
    fifth: list[int] = []
    waiter = threading.Thread(target=lambda: run_transaction(
        source, ENVIRONMENT, lambda tx: fifth.append(tx.cursor.connection.info.backend_pid)))
    waiter.start()
    waiter.join(timeout=0.5)
    assert waiter.is_alive() and not fifth  # all four are lent: it waits
    held[0].__exit__(None, None, None)
    waiter.join(timeout=30)
    assert fifth == [conns[0].info.backend_pid]
    for context in held[1:]:
        context.__exit__(None, None, None)
    source.close()


def test_a_transition_s_cas_and_its_audit_row_are_one_statement(
        journal_dsn: str, pg: PostgresJournal, monkeypatch: pytest.MonkeyPatch) -> None:
    """A data-modifying CTE updates the child and appends its audit row (one round trip); the
    audit row is the one two statements wrote."""
    child = pg.admit_parent(admission([(0, 10)])).parent.children[0]
    names: list[str] = []
    execute = Tx._execute

    def recorded(self: Tx, name: str, params: Any) -> None:
        names.append(name)
        execute(self, name, params)

    monkeypatch.setattr(Tx, "_execute", recorded)
    submit(pg, child.operation_id)
    assert names.count("cas_child_audited") == 1 and "insert_audit" not in names
    trail = _rows(journal_dsn, "SELECT actor, transition_id, from_state, to_state, revision, "
                  "operation_namespace, tenant_id FROM rest_delivery_audit "
                  "WHERE operation_id = %s ORDER BY audit_id DESC LIMIT 1", child.operation_id)
    stored = _rows(journal_dsn, "SELECT revision, operation_namespace, tenant_id "
                   "FROM rest_delivery_child WHERE operation_id = %s", child.operation_id)
    assert trail == [("worker-1", "sealed_submit", "sealed", "submitting", *stored[0])]
