"""PostgreSQL-only races between separate processes (spawned, never forked)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import _journal_race_worker as worker
import psycopg
import pytest
from _journal_support import ENVIRONMENT, admission
from psycopg import sql
from psycopg.conninfo import make_conninfo

from dpone.contracts.journal import TransitionRequest
from dpone.journal.postgres import PostgresJournal

RACERS = 8


def _race(target: Callable[..., None], per_racer: Callable[[int], tuple[Any, ...]]) -> list[Any]:
    return worker.race(target, "postgres", RACERS, per_racer)


@pytest.fixture
def empty_schema_dsn(postgres_dsn: str) -> Iterator[str]:
    schema = "journal_" + secrets.token_hex(6)
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield make_conninfo(postgres_dsn, options=f"-c search_path={schema},public")
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture
def pg(journal_dsn: str) -> Any:
    journal = PostgresJournal(journal_dsn, environment_id=ENVIRONMENT)
    yield journal
    journal.close()


def test_racing_admissions_create_exactly_one_topology(journal_dsn: str,
                                                       pg: PostgresJournal) -> None:
    request = admission([(0, 10), (10, 20), (20, 31)])
    outcomes = _race(worker.admit, lambda _i: (journal_dsn, request))
    assert all(status == "ok" for _i, status, _value in outcomes)
    assert sorted(value[0] for _i, _s, value in outcomes) == [False] + [True] * (RACERS - 1)
    assert len({value[1] for _i, _s, value in outcomes}) == 1
    parent = pg.find_parent(request.tenancy, request.parent_plan_digest)
    assert parent is not None
    assert [c.revision for c in parent.children] == [1, 1, 1]


def test_racing_cas_updates_have_exactly_one_winner(journal_dsn: str,
                                                    pg: PostgresJournal) -> None:
    child = pg.admit_parent(admission([(0, 10)])).parent.children[0]
    lease = pg.acquire_lease(child.operation_id, "mutation", "worker-1", 120)
    request = TransitionRequest(operation_id=child.operation_id,
                                transition_id="sealed_pre_submit_fence_refused",
                                expected_revision=child.revision, evidence_kind="admission",
                                evidence_name="PRE_SUBMIT_FENCE_REFUSED",
                                facts=("no_request_sent",))
    outcomes = _race(worker.cas, lambda _i: (journal_dsn, request, lease))
    statuses = [(status, value) for _i, status, value in outcomes]
    assert statuses.count(("ok", child.revision + 1)) == 1
    assert statuses.count(("error", "journal.revision_conflict")) == RACERS - 1
    assert pg.get_child(child.operation_id).revision == child.revision + 1


def test_capacity_is_never_exceeded_by_racing_submits(journal_dsn: str,
                                                      pg: PostgresJournal) -> None:
    scopes = [(n * 3, n * 3 + 3) for n in range(RACERS)]
    parent = pg.admit_parent(admission(scopes, max_remote_jobs=2)).parent
    prepared = []
    for child in parent.children:
        lease = pg.acquire_lease(child.operation_id, "mutation", f"worker-{child.ordinal}", 120)
        prepared.append((pg.plan_attempt(child.operation_id, lease), lease, child.revision))
    outcomes = _race(worker.enter, lambda i: (journal_dsn, *prepared[i]))
    statuses = [(status, value) for _i, status, value in outcomes]
    assert statuses.count(("ok", "submitting")) == 2
    assert statuses.count(("error", "journal.capacity_exhausted")) == RACERS - 2
    states = [pg.get_child(c.operation_id).state_name for c in parent.children]
    assert states.count("submitting") == 2


def test_racing_migrations_apply_each_version_once(empty_schema_dsn: str) -> None:
    outcomes = _race(worker.migrate, lambda _i: (empty_schema_dsn,))
    applied = sorted(value for _i, status, value in outcomes if status == "ok")
    assert len(applied) == RACERS
    assert applied.count(()) == RACERS - 1
    with psycopg.connect(empty_schema_dsn) as conn:
        rows = conn.execute("SELECT version FROM dpone_schema_migrations").fetchall()
    assert [row[0] for row in rows] == list(applied[-1])
