"""Fixtures for the generation races: one migrated schema and one spawn pool per module.

The schema follows the journal suite's per-test pattern (a randomly named schema reached through
the DSN's ``search_path``, migrated from scratch and dropped after), but lives for the module:
a hypothesis test runs many examples against it, and each example isolates itself in a fresh
effect-conflict domain and fresh routes, so examples never see each other's rows.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from multiprocessing.pool import Pool
from typing import Any

import pytest

from support import generation_race_worker as worker
from support.journal import ENVIRONMENT
from support.journal_schema import migrated_schema


@pytest.fixture(scope="module")
def race_journal_dsn(postgres_dsn: str) -> Iterator[str]:
    """A DSN whose search_path is a fresh, migrated schema of its own (for the module)."""
    with migrated_schema(postgres_dsn, ENVIRONMENT, prefix="journal_races_") as dsn:
        yield dsn


@pytest.fixture(scope="module")
def race_pool(race_journal_dsn: str) -> Iterator[Pool]:
    """Spawned (never forked) workers, each holding one journal on the module's schema."""
    context = multiprocessing.get_context("spawn")
    pool = context.Pool(worker.POOL_SIZE, initializer=worker.open_journal,
                        initargs=(race_journal_dsn,))
    try:
        yield pool
    finally:
        pool.close()
        pool.join()


@pytest.fixture(scope="module")
def race_manager() -> Iterator[Any]:
    """A spawned manager serving the per-example start barriers to the pool's workers."""
    with multiprocessing.get_context("spawn").Manager() as manager:
        yield manager
