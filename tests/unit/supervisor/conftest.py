"""Fixtures of the supervisor unit tests: both examples sealed once per session, then a private
copy of the sealed store, a fresh SQLite journal and a scripted receiver for each test."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.transport import HttpTransport
from dpone.journal.sqlite import SqliteJournal
from support.common import EXAMPLES
from support.delivery import wide_rates
from support.example_seal import SealedExample, seal_example
from support.supervisor import (
    SHORT,
    WORKLOADS,
    ScriptedReceiver,
    Supervised,
    fast_polling,
    mock_transport,
)


@pytest.fixture(scope="session")
def sealed_short(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SealedExample]:
    """Each family's example frozen and sealed over ``SHORT`` (read-only: tests copy it)."""
    root = tmp_path_factory.mktemp("supervisor-sealed")
    return {family: seal_example(EXAMPLES / "workloads" / f"{name}.yaml", EXAMPLES, root / family,
                                 SHORT)
            for family, name in WORKLOADS.items()}


@pytest.fixture
def supervised(sealed_short: dict[str, SealedExample],
               tmp_path: Path) -> Iterator[Callable[..., Supervised]]:
    """``supervised(family, plan=None)``: the sealed example with a store, journal and receiver
    of its own; ``plan`` maps the (fast-polling, wide-rate) sealed plan to the one to deliver."""
    opened: list[tuple[SqliteJournal, HttpTransport]] = []

    def make(family: str,
             plan: Callable[[RestDeliveryPlan], RestDeliveryPlan] | None = None) -> Supervised:
        sealed = sealed_short[family]
        root = tmp_path / family
        shutil.copytree(sealed.store.root, root / "artifacts")
        delivered = wide_rates(fast_polling(sealed.plan))
        delivered = plan(delivered) if plan is not None else delivered
        journal = SqliteJournal(root / "journal.sqlite3",
                                environment_id=delivered.environment.snapshot.environment_id)
        journal.migrate()
        receiver = ScriptedReceiver(family, sealed.topology)
        transport = mock_transport(delivered, receiver)
        opened.append((journal, transport))
        return Supervised(family=family, plan=delivered, topology=sealed.topology,
                          store=LocalArtifactStore(root / "artifacts"), journal=journal,
                          receiver=receiver, transport=transport)

    try:
        yield make
    finally:
        for journal, transport in opened:
            transport.close()
            journal.close()
