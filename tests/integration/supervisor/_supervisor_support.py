"""The sync example sealed for the supervisor suite, and what a delivery test holds."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _example_seal import seal_example

from _support import EXAMPLES
from dpone.artifacts import LocalArtifactStore
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.supervisor import DeliveryResult, deliver_sync
from dpone.executor.transport import HttpTransport
from dpone.journal.sqlite import SqliteJournal
from dpone.receiver import ReceiverThread

TOKEN = "tok-supervisor-3Fq9-never-echoed"
TOKEN_ENV = "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN"
INTERVAL = (dt.date(2026, 8, 1), dt.date(2026, 9, 1))
SYNC_PREFIX = "/mock/v1/batches/"


@dataclass(frozen=True)
class SealedSync:
    plan: RestDeliveryPlan
    topology: SealedTopology
    store: LocalArtifactStore

    def sealed_rows(self) -> list[dict[str, Any]]:
        """Every sealed row, decoded from the NDJSON payloads in ordinal order."""
        rows: list[dict[str, Any]] = []
        for child in self.topology.children:
            data = self.store.get_bytes(child.payload.key)
            rows.extend(json.loads(line) for line in data.decode("utf-8").splitlines() if line)
        return rows


def seal_sync_example(root: Path) -> SealedSync:
    sealed = seal_example(EXAMPLES / "workloads" / "measurements_sync.yaml", EXAMPLES, root,
                          INTERVAL)
    return SealedSync(sealed.plan, sealed.topology, sealed.store)


@dataclass(frozen=True)
class Delivery:
    sealed: SealedSync
    journal: SqliteJournal
    transport: HttpTransport
    receiver: ReceiverThread

    def run(self) -> DeliveryResult:
        return deliver_sync(self.sealed.plan, self.sealed.topology, self.journal,
                            self.sealed.store, self.transport, holder="supervisor-test",
                            sleep=lambda _seconds: None)

    def ledger(self) -> dict[str, Any]:
        return self.receiver.state.ledger.snapshot(with_rows=True)

    def fail_next_post(self, fault: str, **params: Any) -> None:
        self.receiver.state.faults.install(
            [{"match": {"method": "POST", "path_prefix": SYNC_PREFIX}, "fault": fault, **params}])
