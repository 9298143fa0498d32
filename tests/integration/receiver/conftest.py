"""One mock receiver per session on a free loopback port, driven by a manual clock.

Each test gets it reset (ledger, jobs, fault rules); ids keep counting across tests, and the
clock only moves forward, so tests use relative time. Tests that need another configuration
start their own ReceiverThread.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from dpone.receiver import ManualClock, ReceiverConfig, ReceiverThread
from support.receiver import PROCESSING_SECONDS, TOKEN


@pytest.fixture(scope="session")
def _session_clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(scope="session")
def _session_receiver(_session_clock: ManualClock) -> Iterator[ReceiverThread]:
    config = ReceiverConfig(token=TOKEN, processing_seconds=PROCESSING_SECONDS, clock=_session_clock)
    with ReceiverThread(config) as running:
        yield running


@pytest.fixture
def clock(_session_clock: ManualClock) -> ManualClock:
    return _session_clock


@pytest.fixture
def receiver(_session_receiver: ReceiverThread) -> ReceiverThread:
    _session_receiver.state.reset()
    return _session_receiver


@pytest.fixture
def client(receiver: ReceiverThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=receiver.base_url, headers={"Authorization": f"Bearer {TOKEN}"},
                      timeout=5.0, trust_env=False) as http:
        yield http
