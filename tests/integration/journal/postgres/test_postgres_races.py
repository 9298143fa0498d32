"""PostgreSQL-only races between separate processes (spawned, never forked)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from dpone.journal.postgres import PostgresJournal
from support import journal_race_worker as worker
from support import journal_races as scenarios
from support.journal import ENVIRONMENT, admission
from support.journal_schema import migrated_schema

RACERS = scenarios.RACERS


def _race(target: Callable[..., None], per_racer: Callable[[int], tuple[Any, ...]]) -> list[Any]:
    return worker.race(target, "postgres", RACERS, per_racer)


@pytest.fixture
def empty_schema_dsn(postgres_dsn: str) -> Iterator[str]:
    with migrated_schema(postgres_dsn, ENVIRONMENT, migrate=False) as dsn:
        yield dsn


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
    scenarios.cas_has_one_winner(pg, journal_dsn, _race)


def test_capacity_is_never_exceeded_by_racing_submits(journal_dsn: str,
                                                      pg: PostgresJournal) -> None:
    scenarios.capacity_is_never_exceeded(pg, journal_dsn, _race)


def test_racing_migrations_apply_each_version_once(empty_schema_dsn: str) -> None:
    outcomes = _race(worker.migrate, lambda _i: (empty_schema_dsn,))
    applied = sorted(value for _i, status, value in outcomes if status == "ok")
    assert len(applied) == RACERS
    assert applied.count(()) == RACERS - 1
    with psycopg.connect(empty_schema_dsn) as conn:
        rows = conn.execute("SELECT version FROM dpone_schema_migrations").fetchall()
    assert [row[0] for row in rows] == list(applied[-1])
