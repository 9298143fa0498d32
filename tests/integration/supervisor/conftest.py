"""Fixtures for the supervisor suite: the sync example sealed into a fresh store per test,
a fresh SQLite journal, and one authenticated mock receiver (reset per test)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _supervisor_support import TOKEN, TOKEN_ENV, Delivery, seal_sync_example

from dpone.executor.transport import HttpTransport, TransportTimeouts, resolve_credentials
from dpone.journal.sqlite import SqliteJournal
from dpone.receiver import ReceiverConfig, ReceiverThread


@pytest.fixture(scope="module")
def _module_receiver() -> Iterator[ReceiverThread]:
    with ReceiverThread(ReceiverConfig(token=TOKEN)) as running:
        yield running


@pytest.fixture
def receiver(_module_receiver: ReceiverThread) -> ReceiverThread:
    _module_receiver.state.reset()
    return _module_receiver


@pytest.fixture
def delivery(tmp_path: Path, receiver: ReceiverThread,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[Delivery]:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    sealed = seal_sync_example(tmp_path / "artifacts")
    binding = sealed.plan.binding.snapshot.model_copy(update={"authority": receiver.base_url})
    environment = sealed.plan.environment.snapshot
    journal = SqliteJournal(tmp_path / "journal.sqlite3", environment_id=environment.environment_id)
    journal.migrate()
    transport = HttpTransport(binding, resolve_credentials(binding),
                              timeouts=TransportTimeouts(connect=2, read=10, write=10, pool=2,
                                                         total=20))
    try:
        yield Delivery(sealed=sealed, journal=journal, transport=transport, receiver=receiver)
    finally:
        transport.close()
        journal.close()
