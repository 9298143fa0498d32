"""The measured paths of the delivery benchmark and the receiver they all send to.

* :func:`dpone_cli`: ``dpone deliver WORKLOAD --wait`` as a cold subprocess (fresh journal,
  artifact store and plan directory), wall time and the child's own peak RSS (``os.wait4``);
* :func:`naive_client`: ``benchmarks/_naive.py`` as a subprocess, same measurements;
* :func:`bare_upload`: in this process, one ``httpx.Client`` POSTing the sealed request bodies
  (read into memory beforehand) of a dpone run's artifact store;
* :func:`checked_upload`: the same POSTs, each payload read and checked by the supervisor's own
  ``check_payload`` just before its POST;
* :func:`in_process`: ``deliver()`` in this process with timing proxies on its ports, the source
  of the per-child journal figure (never mixed into the end-to-end figures); the same through a
  transport that answers at once with no socket (``_answering``) is the ``no-wire`` path.

Each run resets the receiver first and checks its ledger after: every row applied, none twice
(the ``no-wire`` path sends nothing to it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _deliver_cpu import CpuWatch, PidSource

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import DponeError
from dpone.contracts.journal import DeliveryJournalPort
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import RestTransportPort
from dpone.contracts.sealed import SealedChild, SealedTopology
from dpone.executor.supervisor import DeliveryCompleted, deliver, outbound_request
from dpone.executor.supervisor._request import check_payload
from dpone.executor.transport import OutboundRequest, transport_for

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
TOKEN_ENV = "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN"
DPONE = [sys.executable, "-c", "from dpone.cli._console import dpone; dpone()"]
HOLDER = "bench-deliver"
CHILD_TIMEOUT_S = 3600


@dataclass
class Run:
    """One measured run of one path."""

    path: str
    seconds: float
    rows: int
    wire_bytes: int
    requests: int
    peak_rss_mb: float | None = None
    cpu_s: float | None = None
    """User + system CPU seconds of the measured process (a cold CLI run only)."""
    ledger: dict[str, int] = field(default_factory=dict)
    """The receiver's count after the run: ``rows_total`` and ``duplicate_mutations``."""
    spent: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    def spent_in(self, prefix: str) -> float:
        return sum(v for k, v in self.spent.items() if k == prefix or k.startswith(prefix + "."))

    def calls_in(self, prefix: str) -> int:
        return sum(v for k, v in self.calls.items() if k == prefix or k.startswith(prefix + "."))

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "seconds": round(self.seconds, 4), "rows": self.rows, "wire_bytes": self.wire_bytes,
            "requests": self.requests, "rows_per_s": round(self.rows / self.seconds, 1),
            "mb_per_s": round(self.wire_bytes / 1e6 / self.seconds, 2),
            "peak_rss_mb": None if self.peak_rss_mb is None else round(self.peak_rss_mb, 1),
            "cpu_s": None if self.cpu_s is None else round(self.cpu_s, 3),
            "receiver": self.ledger}
        if self.spent:
            document["spent_s"] = {k: round(v, 4) for k, v in sorted(self.spent.items())}
            document["calls"] = dict(sorted(self.calls.items()))
        return document


# -- the receiver ------------------------------------------------------------------------------


class Receiver:
    """A receiver in its own process (the line counter, or ``dpone receiver serve``)."""

    def __init__(self, kind: str, token: str, scratch: Path) -> None:
        self.kind, self._token = kind, token
        self._log = (scratch / f"receiver-{kind}.log").open("w")
        env = {**os.environ, TOKEN_ENV: token, "PYTHONPATH": str(REPO)}
        if kind == "lines":
            argv = [sys.executable, str(BENCHMARKS / "_line_receiver.py"), "--port", "0"]
            self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._log,
                                            env=env, text=True)
            line = self.process.stdout.readline() if self.process.stdout else ""
            if not line.startswith("listening "):
                self.close()
                raise RuntimeError(f"the line receiver did not start: {line!r}")
            self.port = int(line.split()[1])
        else:
            self.port = _free_port()
            self.process = subprocess.Popen(
                [*DPONE, "receiver", "serve", "--port", str(self.port),
                 "--processing-seconds", "0"], stdout=self._log, stderr=self._log, env=env)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._control = httpx.Client(base_url=self.base_url, trust_env=False, timeout=60,
                                      headers={"Authorization": f"Bearer {token}"})
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.TransportError):
                self._control.get("/mock/_ledger").raise_for_status()
                return
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError(f"the {self.kind} receiver did not start")
            time.sleep(0.05)

    def reset(self) -> None:
        self._control.post("/mock/_reset").raise_for_status()

    def check(self, label: str, rows: int) -> dict[str, Any]:
        """The ledger after a run: exactly ``rows`` rows applied, no mutation applied twice."""
        ledger: dict[str, Any] = self._control.get("/mock/_ledger").json()
        if ledger["rows_total"] != rows or ledger["duplicate_mutations"]:
            raise RuntimeError(f"{label}: the receiver applied {ledger['rows_total']} rows "
                               f"({ledger['duplicate_mutations']} duplicate mutations), "
                               f"expected {rows} once each")
        return ledger

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._control.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


def _free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- subprocesses ------------------------------------------------------------------------------


@dataclass
class Child:
    seconds: float
    returncode: int
    peak_rss_mb: float
    cpu_s: float
    stdout: str
    stderr: str


# The measured child is started by this small interpreter, not by the benchmark process: Linux
# keeps the RSS high-water mark of the image a process was forked (or vforked) from across exec,
# so a child spawned straight from this ~150 MB process would report at least that. Spawned from
# a ~10 MB launcher, ``wait4`` gives the child's own peak; the launcher also times the child.
LAUNCHER = """import os, sys, time
start = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(sys.argv[1], "w") as out:
    out.write(f"{seconds} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_child(argv: list[str], *, env: dict[str, str], cwd: Path) -> Child:
    """Run ``argv`` to its end through the launcher: wall time, exit code and its own peak RSS
    (``wait4`` in the launcher: this child's figure alone, unlike ``RUSAGE_CHILDREN``)."""
    cwd.mkdir(parents=True, exist_ok=True)
    measured = cwd / "measured"
    launcher = [sys.executable, "-S", "-E", "-c", LAUNCHER, str(measured)]
    with (cwd / "stdout").open("w+") as out, (cwd / "stderr").open("w+") as err:
        process = subprocess.run([*launcher, *argv], stdout=out, stderr=err, env=env, cwd=cwd,
                                 timeout=CHILD_TIMEOUT_S, check=False)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    try:
        seconds, maxrss_kib, cpu_s = measured.read_text().split()
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"{argv[0]} was not measured: {stderr[-1500:]}") from exc
    return Child(float(seconds), process.returncode, int(maxrss_kib) / 1024, float(cpu_s), stdout,
                 stderr)


def child_env(token: str) -> dict[str, str]:
    return {**os.environ, TOKEN_ENV: token, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}


def dpone_cli(workload: Path, registry: Path, interval: tuple[str, str], journal_url: str,
              scratch: Path, token: str, rows: int, wire_bytes: int, children: int, *,
              telemetry: bool = False) -> Run:
    """``dpone deliver --wait`` from a cold process; the artifact store stays in ``scratch``.
    With ``telemetry``: JSON log events on stderr (to a file) and the metrics served on a port
    while it runs (the ``telemetry`` path)."""
    logging = ["--log-format", "json"] if telemetry else []
    serving = ["--metrics-port", str(_free_port())] if telemetry else []
    argv = [*DPONE, *logging, "deliver", str(workload), "--registry", str(registry),
            "--interval-start", interval[0], "--interval-end", interval[1],
            "--journal", journal_url, "--artifacts", str(scratch / "artifacts"),
            "--plans", str(scratch / "plans"), "--wait", "--format", "json", *serving]
    child = run_child(argv, env=child_env(token), cwd=scratch)
    if telemetry and '"event":"transition"' not in child.stderr:
        raise RuntimeError(f"the telemetry run logged no transition event: {child.stderr[-1500:]}")
    try:
        document = json.loads(child.stdout)
    except ValueError:
        document = {}
    if child.returncode != 0 or document.get("status") != "completed":
        raise RuntimeError(f"dpone deliver exited {child.returncode} "
                           f"(status {document.get('status')!r}): {child.stdout[-1500:]}"
                           f"{child.stderr[-1500:]}")
    return Run("telemetry" if telemetry else "dpone", child.seconds, rows, wire_bytes, children,
               child.peak_rss_mb, child.cpu_s)


def naive_client(family: str, csv_file: Path, base_url: str, resource: str, scratch: Path,
                 token: str) -> Run:
    argv = [sys.executable, str(BENCHMARKS / "_naive.py"), family, str(csv_file), base_url,
            resource]
    child = run_child(argv, env=child_env(token), cwd=scratch)
    if child.returncode != 0:
        raise RuntimeError(f"the naive client exited {child.returncode}: {child.stderr[-1500:]}")
    totals = json.loads(child.stdout)
    if totals["accepted_rows"] != totals["rows"]:
        raise RuntimeError(f"naive: {totals['accepted_rows']} of {totals['rows']} rows accepted")
    return Run("naive", child.seconds, totals["rows"], totals["wire_bytes"], totals["requests"],
               child.peak_rss_mb)


# -- the bare upload -----------------------------------------------------------------------------

Bodies = list[tuple[OutboundRequest, bytes]]


def sealed_bodies(plan: RestDeliveryPlan, topology: SealedTopology, store_root: Path) -> Bodies:
    """Every child's request as dpone sent it, its body read from ``store_root`` (a dpone run's
    artifact store); each payload's SHA-256 is checked against the sealed digest, and the store
    must hold exactly the topology's payloads: these are the bytes that run sealed and sent."""
    store = LocalArtifactStore(store_root)
    keys = {child.payload.key for child in topology.children}
    held = {str(path.relative_to(store_root)) for path in (store_root / "payloads").rglob("*")
            if path.is_file() and not path.name.endswith(".json")}
    if held != keys:
        raise RuntimeError(f"the dpone run sealed {len(held)} payloads, this process "
                           f"{len(keys)}; their keys differ")
    return [_checked_request(plan, child, store) for child in topology.children]


def _checked_request(plan: RestDeliveryPlan, child: SealedChild,
                     store: LocalArtifactStore) -> tuple[OutboundRequest, bytes]:
    """``child``'s request and body as ``deliver()`` sends them: its payload read from ``store``
    and checked against the sealed digest by the supervisor's own check."""
    request = outbound_request(plan, child, store, check_payload(child, store))
    body = b"".join(request.body)
    if len(body) != request.content_length:
        raise RuntimeError("a sealed request body differs from its content length")
    return request, body


def _post(client: httpx.Client, request: OutboundRequest, body: bytes,
          accepted: set[int]) -> None:
    headers = dict(request.headers)
    if request.content_type is not None:
        headers["Content-Type"] = request.content_type
    response = client.request(request.method, request.path, params=list(request.query),
                              headers=headers, content=body)
    if response.status_code not in accepted:
        raise RuntimeError(f"bare upload: HTTP {response.status_code} {response.text}")


def _client(base_url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=base_url, trust_env=False, timeout=300,
                        headers={"Authorization": f"Bearer {token}",
                                 "Accept-Encoding": "identity"})


def bare_upload(plan: RestDeliveryPlan, bodies: Bodies, base_url: str, token: str,
                rows: int, watch: Mapping[str, PidSource] | None = None) -> Run:
    """The sealed bodies POSTed one after another, and the CPU this process and the ``watch``ed
    processes spent meanwhile (``cpu.*`` in ``spent``)."""
    accepted = set(plan.profile.snapshot.acknowledgement.accepted_statuses)
    with _client(base_url, token) as client:
        cpu = CpuWatch(watch or {})
        start = time.perf_counter()
        for request, body in bodies:
            _post(client, request, body, accepted)
        seconds = time.perf_counter() - start
        spent = cpu.spent()
    return Run("bare", seconds, rows, sum(len(body) for _, body in bodies), len(bodies),
               spent=spent)


def checked_upload(plan: RestDeliveryPlan, topology: SealedTopology, store_root: Path,
                   base_url: str, token: str, rows: int,
                   watch: Mapping[str, PidSource] | None = None) -> Run:
    """The bare upload, each payload read from the sealed store at ``store_root`` and its
    SHA-256 checked against the sealed digest just before its POST: the least a sender does
    that never sends altered bytes under the sealed digest (no journal, marker or evidence)."""
    accepted = set(plan.profile.snapshot.acknowledgement.accepted_statuses)
    store = LocalArtifactStore(store_root)
    wire = 0
    with _client(base_url, token) as client:
        cpu = CpuWatch(watch or {})
        start = time.perf_counter()
        for child in topology.children:
            request, body = _checked_request(plan, child, store)
            _post(client, request, body, accepted)
            wire += len(body)
        seconds = time.perf_counter() - start
        spent = cpu.spent()
    return Run("checked", seconds, rows, wire, len(topology.children), spent=spent)


# -- deliver() in this process, with timing proxies --------------------------------------------


class Clock:
    """Time and calls spent in each port method, keyed ``port.method``, and the calling
    thread's CPU time in it, keyed ``thread_cpu.port.method``."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, category: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.spent[f"thread_cpu.{category}"] += time.thread_time() - cpu
                self.spent[category] += time.perf_counter() - start
                self.calls[category] += 1
        return timed_call

    def sleep(self, seconds: float) -> None:
        self.wrap("sleep", time.sleep)(seconds)


class TimedPort:
    """Forwards every attribute; public methods are timed under ``category``."""

    def __init__(self, inner: Any, clock: Clock, category: str) -> None:
        self._inner, self._clock, self._category = inner, clock, category

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if callable(value) and not name.startswith("_"):
            return self._clock.wrap(f"{self._category}.{name}", value)
        return value


class TimedTransport:
    """The transport port; submits (with a body) and polls are timed apart."""

    def __init__(self, inner: RestTransportPort, clock: Clock) -> None:
        self._inner, self._clock = inner, clock

    def send(self, request: OutboundRequest) -> Any:
        category = "submit" if request.method == "POST" else "poll"
        return self._clock.wrap(category, self._inner.send)(request)


JournalFactory = Callable[[Path, str], contextlib.AbstractContextManager[DeliveryJournalPort]]
TransportFactory = Callable[[RestDeliveryPlan], contextlib.AbstractContextManager[Any]]


def in_process(plan: RestDeliveryPlan, topology: SealedTopology, sealed_root: Path,
               open_journal: JournalFactory, scratch: Path, wire_bytes: int,
               watch: Mapping[str, PidSource] | None = None,
               open_transport: TransportFactory = transport_for, label: str = "in-process") -> Run:
    """``deliver()`` with a fresh journal and a fresh store holding the sealed artifacts (hard
    links), every port call timed, and the CPU this process and the ``watch``ed processes
    (the receiver, a journal server) spent meanwhile (``cpu.*`` in ``spent``);
    ``open_transport``: the plan's HTTP transport, or another (``_answering``)."""
    shutil.copytree(sealed_root, scratch / "artifacts", copy_function=os.link)
    store = LocalArtifactStore(scratch / "artifacts")
    clock = Clock()
    with open_journal(scratch, plan.environment.snapshot.environment_id) as journal, \
            open_transport(plan) as transport:
        ports: dict[str, Any] = {"journal": TimedPort(journal, clock, "journal"),
                                 "artifacts": TimedPort(store, clock, "artifacts"),
                                 "transport": TimedTransport(transport, clock)}
        cpu = CpuWatch(watch or {})
        lent_before = lent_seconds(journal)
        start = time.perf_counter()
        try:
            result = deliver(plan, topology, ports["journal"], ports["artifacts"],
                             ports["transport"], holder=HOLDER, wait=True, sleep=clock.sleep)
        except DponeError as exc:
            raise RuntimeError(f"in-process deliver() raised {exc.code}: {exc.message}") from exc
        seconds = time.perf_counter() - start
        clock.spent.update(cpu.spent())
        if lent_before is not None:
            clock.spent["journal_connection_lent"] = (lent_seconds(journal) or 0.0) - lent_before
    if not isinstance(result, DeliveryCompleted):
        raise RuntimeError(f"in-process delivery did not complete: {result!r}")
    requests = clock.calls["submit"] + clock.calls["poll"]
    return Run(label, seconds, topology.total_rows, wire_bytes, requests,
               spent=dict(clock.spent), calls=dict(clock.calls))


@contextlib.contextmanager
def sqlite_journal(scratch: Path, environment_id: str) -> Iterator[DeliveryJournalPort]:
    """A fresh SQLite journal whose one connection reports how long it was lent
    (:func:`lent_seconds`): every transaction holds it, so it is the journal's serial part."""
    from dpone.journal.sqlite import SqliteJournal  # noqa: PLC0415

    journal = SqliteJournal(scratch / "journal.sqlite3", environment_id=environment_id)
    database = journal._db  # the benchmark times the adapter's one connection
    lend = database.connection
    lent = [0.0]

    @contextlib.contextmanager
    def timed() -> Iterator[Any]:
        with lend() as connection:
            start = time.perf_counter()
            try:
                yield connection
            finally:
                lent[0] += time.perf_counter() - start

    database.connection = timed  # type: ignore[method-assign]
    journal.bench_lent_s = lent  # type: ignore[attr-defined]
    try:
        journal.migrate()
        yield journal
    finally:
        journal.close()


def lent_seconds(journal: Any) -> float | None:
    """Seconds the journal's one connection was lent so far (None: not a timed SQLite one)."""
    lent = getattr(journal, "bench_lent_s", None)
    return None if lent is None else float(lent[0])
