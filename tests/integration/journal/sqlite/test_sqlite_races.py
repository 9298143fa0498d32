"""Races between separate processes (spawned, never forked) over one SQLite journal file.

``BEGIN IMMEDIATE`` admits one writer at a time, so every race below is linearized by the
database write lock: one topology, one CAS winner, never more reservations than slots.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dpone.journal._sql import migrations
from dpone.journal.sqlite import SqliteJournal
from support import journal_race_worker as worker
from support import journal_races as scenarios
from support.journal import ENVIRONMENT, admission

RACERS = scenarios.RACERS
pytestmark = pytest.mark.slow


def _race(target: Callable[..., None], racers: int,
          per_racer: Callable[[int], tuple[Any, ...]]) -> list[Any]:
    return worker.race(target, "sqlite", racers, per_racer)


def _eight(target: Callable[..., None], per_racer: Callable[[int], tuple[Any, ...]]) -> list[Any]:
    return _race(target, RACERS, per_racer)


@pytest.fixture
def lite(journal_path: Path) -> Iterator[SqliteJournal]:
    journal = SqliteJournal(journal_path, environment_id=ENVIRONMENT)
    yield journal
    journal.close()


def test_two_processes_admitting_one_parent_create_one_topology(
        journal_path: Path, lite: SqliteJournal) -> None:
    request = admission([(0, 10), (10, 20), (20, 31)])
    outcomes = _race(worker.admit, 2, lambda _i: (journal_path, request))
    assert all(status == "ok" for _i, status, _value in outcomes)
    assert sorted(value[0] for _i, _s, value in outcomes) == [False, True]
    assert len({value[1] for _i, _s, value in outcomes}) == 1
    parent = lite.find_parent(request.tenancy, request.parent_plan_digest)
    assert parent is not None
    assert [c.revision for c in parent.children] == [1, 1, 1]


def test_eight_processes_admitting_one_parent_create_one_topology(
        journal_path: Path, lite: SqliteJournal) -> None:
    request = admission([(0, 10), (10, 20)])
    outcomes = _race(worker.admit, RACERS, lambda _i: (journal_path, request))
    assert sorted(value[0] for _i, status, value in outcomes if status == "ok") == (
        [False] + [True] * (RACERS - 1))
    parent = lite.find_parent(request.tenancy, request.parent_plan_digest)
    assert parent is not None
    assert len(parent.children) == 2


def test_racing_cas_updates_have_exactly_one_winner(journal_path: Path,
                                                    lite: SqliteJournal) -> None:
    scenarios.cas_has_one_winner(lite, journal_path, _eight)


def test_capacity_is_never_exceeded_by_racing_submits(journal_path: Path,
                                                      lite: SqliteJournal) -> None:
    scenarios.capacity_is_never_exceeded(lite, journal_path, _eight)


def test_racing_migrations_of_a_new_file_apply_once(tmp_path: Path) -> None:
    path = tmp_path / "fresh.sqlite3"
    outcomes = _race(worker.migrate, 2, lambda _i: (path,))
    shipped = tuple(m.version for m in migrations("sqlite"))
    assert sorted(value for _i, _status, value in outcomes) == [(), shipped]
