"""Fixtures of the delivery acceptance suite.

Every test runs on both journals: ``dialect`` is parametrized over SQLite (a fresh database
file) and PostgreSQL (a fresh migrated schema of the session's throwaway cluster). Receivers
live for the session and are reset per test: ``receiver`` ends every job at once,
``slow_receiver`` keeps jobs pending for an hour (for external cancellation). ``harness``
seals a workload into a fresh artifact store and wires it to the journal and a receiver.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dpone.contracts.journal import DeliveryJournalPort
from dpone.executor.transport import HttpTransport
from dpone.journal.postgres import PostgresJournal
from dpone.journal.sqlite import SqliteJournal
from dpone.receiver import ReceiverConfig, ReceiverThread
from support.common import EXAMPLES
from support.delivery import (
    ENVIRONMENT,
    SHORT,
    TOKEN,
    TOKEN_ENV,
    Harness,
    HarnessFactory,
    http_transport,
    postgres_contents,
    postgres_schema,
    seal,
)
from support.spans import spans  # noqa: F401 - the fixture


@pytest.fixture(scope="session")
def _receivers() -> Iterator[dict[str, ReceiverThread]]:
    running = {
        "fast": ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0)).start(),
        "slow": ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=3600)).start(),
    }
    try:
        yield running
    finally:
        for thread in running.values():
            thread.stop()


@pytest.fixture
def receiver(_receivers: dict[str, ReceiverThread]) -> ReceiverThread:
    """A receiver whose jobs end when they are submitted."""
    _receivers["fast"].state.reset()
    return _receivers["fast"]


@pytest.fixture
def slow_receiver(_receivers: dict[str, ReceiverThread]) -> ReceiverThread:
    """A receiver whose jobs stay pending (until a fault ends them)."""
    _receivers["slow"].state.reset()
    return _receivers["slow"]


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


@pytest.fixture(params=["sqlite", "postgres"])
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def journal_location(dialect: str, tmp_path: Path,
                     request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(where, schema): the SQLite directory, or the PostgreSQL DSN and its schema."""
    if dialect == "sqlite":
        directory = tmp_path / "journal"
        directory.mkdir()
        yield str(directory), ""
        return
    with postgres_schema(request.getfixturevalue("postgres_dsn")) as located:
        yield located


@pytest.fixture
def journal(dialect: str, journal_location: tuple[str, str]) -> Iterator[DeliveryJournalPort]:
    where, _schema = journal_location
    adapter: SqliteJournal | PostgresJournal
    if dialect == "sqlite":
        adapter = SqliteJournal(Path(where) / "journal.sqlite3", environment_id=ENVIRONMENT)
        adapter.migrate()
    else:
        adapter = PostgresJournal(where, environment_id=ENVIRONMENT)
    try:
        yield adapter
    finally:
        adapter.close()


@pytest.fixture
def journal_contents(dialect: str, journal_location: tuple[str, str],
                     request: pytest.FixtureRequest) -> Callable[[], bytes]:
    """Everything the journal stores, as bytes: the SQLite files, or every PostgreSQL value."""
    where, schema = journal_location

    def read() -> bytes:
        if dialect == "sqlite":
            return b"".join(p.read_bytes() for p in sorted(Path(where).iterdir()) if p.is_file())
        return postgres_contents(str(request.getfixturevalue("postgres_dsn")), schema)

    return read


@pytest.fixture
def harness(tmp_path: Path, journal: DeliveryJournalPort,
            receiver: ReceiverThread) -> Iterator[HarnessFactory]:
    """``harness(family, interval=SHORT, receiver=..., registry=EXAMPLES, store=name)``."""
    transports: list[HttpTransport] = []

    def make(family: str, interval: tuple[dt.date, dt.date] = SHORT, *,
             receiver: ReceiverThread = receiver, registry: Path = EXAMPLES,
             store: str = "artifacts") -> Harness:
        sealed = seal(family, tmp_path / store, interval, registry=registry)
        transport = http_transport(sealed.plan, receiver.base_url)
        transports.append(transport)
        return Harness(family=family, sealed=sealed, journal=journal, transport=transport,
                       receiver=receiver, plan=sealed.plan)

    try:
        yield make
    finally:
        for transport in transports:
            transport.close()
