"""Fixtures for the `dpone deliver` / `dpone delivery inspect` / `dpone delivery resume` suite:
one authenticated mock receiver per module (reset per test) and a copy of the example registry
bound to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli_support import TOKEN, TOKEN_ENV, bind_registry

from dpone.receiver import ReceiverConfig, ReceiverThread


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
