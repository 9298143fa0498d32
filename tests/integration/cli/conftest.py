"""Fixtures for the `dpone deliver` / `dpone delivery inspect` / `dpone delivery resume` suite:
one authenticated mock receiver per module (reset per test), a copy of the example registry
bound to it, and ``journal_url``: a fresh journal on each dialect (a SQLite file, or a fresh
schema of the session's PostgreSQL cluster named by a ``postgresql://`` URL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, bind_registry, fresh_journal_url


@pytest.fixture(scope="module")
def _module_receiver() -> Iterator[ReceiverThread]:
    with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0.2)) as running:
        yield running


@pytest.fixture
def receiver(_module_receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> ReceiverThread:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    _module_receiver.state.reset()
    return _module_receiver


@pytest.fixture
def registry(tmp_path: Path, receiver: ReceiverThread) -> Path:
    return bind_registry(tmp_path, receiver.base_url)


@pytest.fixture(params=["sqlite", "postgres"])
def journal_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty journal: a SQLite file or a PostgreSQL schema (dropped afterwards)."""
    with fresh_journal_url(request.param, tmp_path / "journal" / "journal.sqlite3",
                           request) as url:
        yield url
