"""The CLI suites' receiver fixtures: one authenticated mock receiver per module (reset per test)
and a copy of the example registry bound to it. Import them into a ``conftest.py``::

    from support.cli_receiver import module_receiver, receiver, registry  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, bind_registry


@pytest.fixture(scope="module", name="_module_receiver")
def module_receiver() -> Iterator[ReceiverThread]:
    with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0.2)) as running:
        yield running


@pytest.fixture(name="receiver")
def receiver(_module_receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> ReceiverThread:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    _module_receiver.state.reset()
    return _module_receiver


@pytest.fixture(name="registry")
def registry(tmp_path: Path, receiver: ReceiverThread) -> Path:
    return bind_registry(tmp_path, receiver.base_url)
