"""Fixtures for the `dpone deliver` / `dpone delivery inspect` / `dpone delivery resume` suite:
one authenticated mock receiver per module (reset per test), a copy of the example registry
bound to it, and ``journal_url``: a fresh journal on each dialect (a SQLite file, or a fresh
schema of the session's PostgreSQL cluster named by a ``postgresql://`` URL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.cli import fresh_journal_url
from support.cli_receiver import module_receiver, receiver, registry  # noqa: F401 - fixtures


@pytest.fixture(params=["sqlite", "postgres"])
def journal_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty journal: a SQLite file or a PostgreSQL schema (dropped afterwards)."""
    with fresh_journal_url(request.param, tmp_path / "journal" / "journal.sqlite3",
                           request) as url:
        yield url
