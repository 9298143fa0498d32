"""Several delivery processes against one journal and one timestamping receiver.

:class:`StampingReceiver` is a small loopback HTTP server that speaks the example synchronous
batch profile (``POST /mock/v1/batches/<resource>``, NDJSON body, bearer token; it answers
``batch_id``, ``accepted_rows``, ``rejected_rows``) and stamps every submit with its arrival and
completion times (``time.time()``, the host clock the journal's database also reads). It holds
each request ``hold_s`` before answering and counts how many are in flight at once.

:func:`deliver_in_processes` runs one ``deliver()`` per sealed delivery, each in its own spawned
process with its own journal adapter on the shared journal (a SQLite file or a PostgreSQL
schema), released together by one barrier, sleeping for real.
"""

from __future__ import annotations

import json
import multiprocessing
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from dpone.artifacts import LocalArtifactStore
from dpone.contracts.journal import DeliveryJournalPort
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.supervisor import DeliveryCompleted, deliver
from dpone.executor.transport import HttpTransport, TransportTimeouts, resolve_credentials
from dpone.journal.postgres import PostgresJournal
from dpone.journal.sqlite import SqliteJournal
from support.delivery import ENVIRONMENT, TOKEN

BATCHES = "/mock/v1/batches/"


@dataclass(frozen=True)
class Stamp:
    """One submit as the receiver saw it: arrival and completion (epoch seconds)."""

    arrived: float
    answered: float
    rows: int


class StampingReceiver:
    """A loopback batch receiver that stamps every submit; a context manager."""

    def __init__(self, *, hold_s: float = 0.0) -> None:
        self.hold_s = hold_s
        self.stamps: list[Stamp] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> StampingReceiver:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def arrivals(self) -> list[float]:
        with self._lock:
            return sorted(stamp.arrived for stamp in self.stamps)

    def enter(self) -> float:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        return time.time()

    def leave(self, arrived: float, rows: int) -> None:
        with self._lock:
            self._in_flight -= 1
            self.stamps.append(Stamp(arrived, time.time(), rows))


def _handler(receiver: StampingReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the test reads the stamps, not a log."""

        def _answer(self, status: int, document: dict[str, Any]) -> None:
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            arrived = receiver.enter()
            rows = 0
            try:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if (self.headers.get("Authorization") != f"Bearer {TOKEN}"
                        or not self.path.startswith(BATCHES)):
                    self._answer(401, {"error": "unauthorized"})
                    return
                rows = sum(1 for line in body.splitlines() if line.strip())
                time.sleep(receiver.hold_s)
                self._answer(200, {"batch_id": f"b-{secrets.token_hex(6)}",
                                   "accepted_rows": rows, "rejected_rows": 0})
            finally:
                receiver.leave(arrived, rows)

    return Handler


@dataclass(frozen=True)
class Delivery:
    """One sealed delivery a process runs: its plan and topology as JSON files, its store."""

    plan: Path
    topology: Path
    store: Path


def write_delivery(root: Path, plan: RestDeliveryPlan, topology: SealedTopology,
                   store: Path) -> Delivery:
    plan_file, topology_file = root / "plan.json", root / "topology.json"
    plan_file.write_text(plan.model_dump_json(by_alias=True), encoding="utf-8")
    topology_file.write_text(topology.model_dump_json(by_alias=True), encoding="utf-8")
    return Delivery(plan_file, topology_file, store)


def _open(dialect: str, location: str) -> DeliveryJournalPort:
    if dialect == "postgres":
        return PostgresJournal(location, environment_id=ENVIRONMENT)
    return SqliteJournal(location, environment_id=ENVIRONMENT)


def _deliver(dialect: str, location: str, delivery: Delivery, authority: str, start: Any,
             results: Any, index: int) -> None:
    plan = RestDeliveryPlan.model_validate_json(delivery.plan.read_text(encoding="utf-8"))
    topology = SealedTopology.model_validate_json(delivery.topology.read_text(encoding="utf-8"))
    journal = _open(dialect, location)
    binding = plan.binding.snapshot.model_copy(update={"authority": authority})
    transport = HttpTransport(binding, resolve_credentials(binding), timeouts=TransportTimeouts(
        connect=5, read=30, write=30, pool=5, total=60))
    try:
        start.wait(timeout=60)
        result = deliver(plan, topology, journal, LocalArtifactStore(delivery.store), transport,
                         holder=f"rate-process-{index}")
        done = isinstance(result, DeliveryCompleted)
        results.put((index, "completed" if done else type(result).__name__,
                     getattr(result, "code", None)))
    except Exception as error:  # reported to the test, which fails on it
        results.put((index, "error", f"{type(error).__name__}: {error}"))
    finally:
        transport.close()
        close = getattr(journal, "close", None)
        if close is not None:
            close()


def deliver_in_processes(dialect: str, location: str, deliveries: Sequence[Delivery],
                         authority: str) -> list[tuple[int, str, str | None]]:
    """One spawned (never forked) process per delivery, released together; their outcomes."""
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(len(deliveries))
    results = context.Queue()
    processes = [context.Process(target=_deliver,
                                 args=(dialect, location, delivery, authority, start, results, i))
                 for i, delivery in enumerate(deliveries)]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=300) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    return sorted(outcomes)
