"""End-to-end delivery throughput on loopback, next to a bare upload of the same request bodies.

Run: ``.venv/bin/python benchmarks/deliver.py [--rows N] [--repeat K] [--journal sqlite|postgres]``
(default 300,000 rows, 3 repeats, SQLite journal; about three minutes on 2 cores).

Writes a scratch copy of the example registry whose ``data/measurements.csv`` holds N seeded
synthetic rows in the example's schema and CSV dialect over the same August 2026 dates (the
example's daily shape, scaled), then freezes and seals both example workloads from it once (timed
separately: sealing is not part of the delivery figure). Both workloads deliver the same rows; a
day holding more rows than a profile's planning limits is split over several sibling children as
the planner decides (the sealing line counts those days). One mock receiver (``ReceiverThread``,
uvicorn on loopback, in this process) authenticates a random bearer token that the script also
puts in ``DPONE_CONN_MOCK_MEASUREMENTS_TOKEN``; the plan's binding authority is pointed at it.

Three scenarios, each measured K times as a pair in the same run against the same receiver:

* ``sync``: ``measurements_sync`` (NDJSON batches, counters in the response);
* ``async shipped``: ``measurements_async`` (multipart CSV+gzip jobs) as shipped: a 2 s poll
  interval and the receiver's default 1 s job processing (``dpone receiver serve``'s default).
  Its time is bound by the protocol: at least children x poll interval;
* ``async engine``: the same topology with the plan copied to ``poll_interval_s=0`` and a
  receiver with ``processing_seconds=0``: what the engine itself costs.

For each pair:

* ``bare``: the transport's limit. One ``httpx.Client`` POSTs every child's sealed request (same
  bytes, method, path, query, semantic headers and bearer header, to the same receiver), bodies
  read into memory beforehand; nothing else (no journal, artifacts, polls or verification).
  Its note gives the mock receiver's own decoding of the same bodies, called directly in each
  repeat (median): on loopback that, not HTTP, is most of the bare time.
* ``deliver``: ``dpone.executor.supervisor.deliver`` with a fresh journal, a fresh artifact store
  (the sealed artifacts hard-linked in) and an ``HttpTransport`` built as ``dpone deliver`` does.
  The ports are wrapped in timing proxies, which splits each child's time into journal calls,
  artifact calls (MAY_ATTEMPT marker publication with fsync, the sealed-payload re-hash before
  submit, evidence), transport sends (submit body streamed from the store, and polls), sleeps
  and the rest (the supervisor itself).

The receiver is reset before each measurement and keeps no parsed rows (``retained_rows=0``);
after each delivery its ledger must show every row applied once. Both paths share the process
(and the GIL) with the receiver. The machine is shared and noisy: compare the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.util
import os
import random
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

from dpone.artifacts import LocalArtifactStore
from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.design import load_state_contract
from dpone.contracts.journal import DeliveryJournalPort
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.seal import seal_boundary
from dpone.executor.supervisor import DeliveryCompleted, deliver, outbound_request
from dpone.executor.transport import HttpTransport, OutboundRequest, transport_for
from dpone.journal.sqlite import SqliteJournal
from dpone.receiver import ReceiverConfig, ReceiverThread
from dpone.receiver._multipart import parse_multipart
from dpone.receiver._readers import gunzip, read_csv, read_ndjson

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TOKEN_ENV = "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN"
INTERVAL = (dt.date(2026, 8, 1), dt.date(2026, 9, 1))
SHIPPED_PROCESSING_S = 1.0  # `dpone receiver serve --processing-seconds` default
SEED = 20260801
MB = 1_000_000
HOLDER = "bench-deliver"


def timed(action: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


# -- synthetic data --------------------------------------------------------------------------


def _generator() -> ModuleType:
    """``examples/generate_measurements.py``: its header, vocabularies, quoting and dates."""
    spec = importlib.util.spec_from_file_location("generate_measurements",
                                                  EXAMPLES / "generate_measurements.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def day_counts(gen: ModuleType, rows: int) -> list[int]:
    """The example's daily shape (weekday 110, weekend 40, days 14-16 240, day 23 3), scaled."""
    weights = []
    for offset in range(gen.DAYS):
        day = gen.FIRST_DAY + dt.timedelta(days=offset)
        weight = 40 if day.weekday() >= 5 else 110
        if 14 <= day.day <= 16:
            weight = 240
        if day.day == 23:
            weight = 3
        weights.append(weight)
    counts = [rows * weight // sum(weights) for weight in weights]
    counts[0] += rows - sum(counts)
    return counts


def synthetic_csv(path: Path, rows: int, seed: int) -> None:
    """N rows in the example's dialect (quoted strings, empty unquoted null, ``""`` empty)."""
    gen = _generator()
    rng = random.Random(seed)
    quote = gen._quote
    sites = [quote(site) for site in gen.SITES]
    notes = [quote(note) for note in gen.NOTES]
    sensors = [quote(f"S-{index:03d}") for index in range(1, 60)]
    counts = day_counts(gen, rows)
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(",".join(gen.HEADER) + "\n")
        for offset, count in enumerate(counts):
            day = gen.FIRST_DAY + dt.timedelta(days=offset)
            iso = day.isoformat()
            midnight = dt.datetime.combine(day, dt.time(), dt.UTC)
            lines = []
            for index in range(count):
                site = "" if rng.random() < 0.05 else rng.choice(sites)
                reading = "" if rng.random() < 0.04 else repr(round(rng.uniform(-40.0, 60.0), 3))
                note = "" if rng.random() < 0.3 else rng.choice(notes)
                millis = min((index * 86_400_000) // count + rng.randrange(0, 60_000),
                             86_399_999)
                stamp = midnight + dt.timedelta(milliseconds=millis)
                measured = stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"
                valid = "true" if rng.random() > 0.1 else "false"
                lines.append(f"{iso},{rng.choice(sensors)},{site},{reading},"
                             f"{rng.randrange(0, 5000)},{note},{measured},{valid}\n")
            out.writelines(lines)


def write_registry(root: Path, rows: int, seed: int) -> Path:
    """A copy of the example registry whose ``data/measurements.csv`` is synthetic."""
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("data"))
    (root / "data").mkdir()
    synthetic_csv(root / "data" / "measurements.csv", rows, seed)
    return root


# -- sealing ---------------------------------------------------------------------------------


@dataclass
class Sealed:
    name: str
    plan: RestDeliveryPlan
    topology: SealedTopology
    store: LocalArtifactStore
    freeze_s: float
    seal_s: float

    @property
    def rows(self) -> int:
        return self.topology.total_rows

    @property
    def wire_bytes(self) -> int:
        return sum(child.request.content_length for child in self.topology.children)


def seal(registry: Path, workload: str, root: Path) -> Sealed:
    compiled = compile_workload(registry / "workloads" / f"{workload}.yaml", registry)
    store = LocalArtifactStore(root)
    start = time.perf_counter()
    frozen_at: list[float] = []
    sealed = seal_boundary(compiled.plan, compiled.digest, store, registry_root=registry,
                           interval_start=INTERVAL[0], interval_end=INTERVAL[1],
                           on_frozen=lambda _parent: frozen_at.append(time.perf_counter()))
    end = time.perf_counter()
    return Sealed(workload, compiled.plan, sealed.topology, store, frozen_at[0] - start,
                  end - frozen_at[0])


# -- scenarios -------------------------------------------------------------------------------


@dataclass
class Scenario:
    name: str
    sealed: Sealed
    plan: RestDeliveryPlan
    binding: ConnectionBinding
    receiver: ReceiverThread
    bound: str


def pointed(plan: RestDeliveryPlan, base_url: str, *,
            poll_interval_s: int | None = None) -> tuple[RestDeliveryPlan, ConnectionBinding]:
    """The plan with its binding authority at ``base_url`` (and, if given, its poll interval)."""
    binding = plan.binding.snapshot.model_copy(update={"authority": base_url})
    update: dict[str, Any] = {"binding": plan.binding.model_copy(update={"snapshot": binding})}
    if poll_interval_s is not None:
        profile = plan.profile.snapshot
        timeouts = profile.timeouts.model_copy(update={"poll_interval_s": poll_interval_s})
        update["profile"] = plan.profile.model_copy(update={
            "snapshot": profile.model_copy(update={"timeouts": timeouts})})
    return plan.model_copy(update=update), binding


# -- runs and the bare upload ---------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    requests: int
    submits: int = 0
    polls: int = 0
    spent: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    def _keys(self, prefix: str) -> list[str]:
        return [key for key in self.spent if key == prefix or key.startswith(prefix + ".")]

    def spent_in(self, prefix: str) -> float:
        """Seconds in ``prefix`` (a port, e.g. ``journal``, or one method, ``journal.transition``)."""
        return sum(self.spent[key] for key in self._keys(prefix))

    def calls_in(self, prefix: str) -> int:
        return sum(self.calls[key] for key in self._keys(prefix))


def bare_requests(sealed: Sealed) -> list[tuple[OutboundRequest, bytes]]:
    """Every child's sealed request and its body bytes, read before any timing."""
    requests = []
    for child in sealed.topology.children:
        request = outbound_request(sealed.plan, child, sealed.store)
        body = b"".join(request.body)
        assert len(body) == request.content_length == child.request.content_length
        requests.append((request, body))
    return requests


def receiver_parse_s(requests: list[tuple[OutboundRequest, bytes]], limit: int) -> float:
    """The mock receiver's own payload decoding of the same bodies, called directly (no HTTP)."""
    start = time.perf_counter()
    for request, body in requests:
        content_type = request.content_type or ""
        if content_type.startswith("multipart/"):
            for part in parse_multipart(body, content_type):
                if part.name == "file":
                    read_csv(gunzip(part.data, limit))
        else:
            read_ndjson(body)
    return time.perf_counter() - start


def bare_upload(scenario: Scenario, requests: list[tuple[OutboundRequest, bytes]],
                token: str) -> Run:
    accepted = set(scenario.plan.profile.snapshot.acknowledgement.accepted_statuses)
    scenario.receiver.state.reset()
    with httpx.Client(base_url=scenario.receiver.base_url, trust_env=False, timeout=120,
                      headers={"Authorization": f"Bearer {token}",
                               "Accept-Encoding": "identity"}) as client:
        start = time.perf_counter()
        for request, body in requests:
            headers = dict(request.headers)
            if request.content_type is not None:
                headers["Content-Type"] = request.content_type
            response = client.request(request.method, request.path, params=list(request.query),
                                      headers=headers, content=body)
            if response.status_code not in accepted:
                raise RuntimeError(f"bare upload: HTTP {response.status_code} {response.text}")
        seconds = time.perf_counter() - start
    return Run(seconds, len(requests), submits=len(requests))


# -- the supervised delivery, with timing proxies --------------------------------------------


class Clock:
    """Time and calls spent in each port, keyed by category."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, category: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
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

    def __init__(self, inner: HttpTransport, clock: Clock) -> None:
        self._inner, self._clock = inner, clock

    def send(self, request: OutboundRequest) -> Any:
        category = "submit" if request.method == "POST" else "poll"
        return self._clock.wrap(category, self._inner.send)(request)


@contextlib.contextmanager
def sqlite_journal(scratch: Path, environment_id: str) -> Iterator[DeliveryJournalPort]:
    journal = SqliteJournal(scratch / "journal.sqlite3", environment_id=environment_id)
    try:
        journal.migrate()
        yield journal
    finally:
        journal.close()


JournalFactory = Callable[[Path, str], contextlib.AbstractContextManager[DeliveryJournalPort]]


def fresh_store(sealed: Sealed, root: Path) -> LocalArtifactStore:
    """A new store holding the sealed artifacts (hard links): markers start from nothing."""
    shutil.copytree(sealed.store.root, root, copy_function=os.link)
    return LocalArtifactStore(root)


def supervised(scenario: Scenario, open_journal: JournalFactory, scratch: Path) -> Run:
    sealed = scenario.sealed
    scratch.mkdir(parents=True)
    store = fresh_store(sealed, scratch / "artifacts")
    environment_id = scenario.plan.environment.snapshot.environment_id
    scenario.receiver.state.reset()
    clock = Clock()
    with open_journal(scratch, environment_id) as journal, \
            transport_for(scenario.plan) as transport:
        ports: dict[str, Any] = {"journal": TimedPort(journal, clock, "journal"),
                                 "artifacts": TimedPort(store, clock, "artifacts"),
                                 "transport": TimedTransport(transport, clock)}
        try:
            result, seconds = timed(lambda: deliver(
                scenario.plan, sealed.topology, ports["journal"], ports["artifacts"],
                ports["transport"], holder=HOLDER, wait=True, sleep=clock.sleep))
        except DponeError as exc:
            submitted = clock.calls["submit"]
            raise RuntimeError(f"{scenario.name}: deliver() raised {exc.code} after {submitted} "
                               f"submit(s): {exc.message}") from exc
    if not isinstance(result, DeliveryCompleted):
        raise RuntimeError(f"{scenario.name}: delivery did not complete: {result!r}")
    ledger = scenario.receiver.state.ledger.snapshot()
    if ledger["rows_total"] != sealed.rows or ledger["duplicate_mutations"]:
        raise RuntimeError(f"{scenario.name}: the receiver applied {ledger['rows_total']} rows "
                           f"({ledger['duplicate_mutations']} duplicates), expected {sealed.rows}")
    shutil.rmtree(scratch)
    submits, polls = clock.calls["submit"], clock.calls["poll"]
    return Run(seconds, submits + polls, submits, polls, dict(clock.spent), dict(clock.calls))


# -- report ----------------------------------------------------------------------------------


@dataclass
class Result:
    scenario: Scenario
    bare: list[Run]
    e2e: list[Run]
    parse_s: list[float] = field(default_factory=list)

    @property
    def children(self) -> int:
        return len(self.scenario.sealed.topology.children)

    def median(self, runs: list[Run]) -> Run:
        return sorted(runs, key=lambda run: run.seconds)[(len(runs) - 1) // 2]

    def ratios(self) -> list[float]:
        return [bare.seconds / e2e.seconds for bare, e2e in zip(self.bare, self.e2e, strict=True)]

    def overheads_ms(self) -> list[float]:
        """Per child: deliver's time outside its submit sends (what the bare path never does)."""
        return [(run.seconds - run.spent_in("submit")) / self.children * 1000 for run in self.e2e]


def _spread(values: list[float], fmt: str) -> str:
    return "" if len(values) < 2 else f"{format(min(values), fmt)}..{format(max(values), fmt)}"


def print_throughput(results: list[Result]) -> None:
    print(f"\n{'scenario':<15} {'path':<8} {'children':>8} {'requests':>8} {'rows':>9} "
          f"{'wire MB':>8} {'s':>7} {'rows/s':>9} {'MB/s':>7} {'vs bare':>8} "
          f"{'overhead':>9}  note")
    for result in results:
        sealed = result.scenario.sealed
        for label, runs in (("bare", result.bare), ("deliver", result.e2e)):
            run = result.median(runs)
            line = (f"{result.scenario.name:<15} {label:<8} {result.children:>8} "
                    f"{run.requests:>8} {sealed.rows:>9,} {sealed.wire_bytes / MB:>8.1f} "
                    f"{run.seconds:>7.2f} {sealed.rows / run.seconds:>9,.0f} "
                    f"{sealed.wire_bytes / MB / run.seconds:>7.1f}")
            if label == "bare":
                parse = statistics.median(result.parse_s)
                print(f"{line} {'1.00x':>8} {'':>9}  uploads only; receiver decoding alone "
                      f"{parse:.2f} s ({parse / run.seconds:.0%})")
                continue
            ratio, over = statistics.median(result.ratios()), statistics.median(result.overheads_ms())
            spread = _spread(result.ratios(), ".2f")
            note = f"{run.submits} submits + {run.polls} polls"
            if spread:
                note += f"; vs bare over runs {spread}"
            print(f"{line} {ratio:>7.2f}x {over:>6.1f} ms  {note}")


def print_breakdown(results: list[Result]) -> None:
    print(f"{'scenario':<15} {'total':>7} {'journal':>13} {'artifacts':>11} {'submit':>7} "
          f"{'(bare)':>7} {'poll':>10} {'sleep':>8} {'other':>6}")
    for result in results:
        run, bare, n = result.median(result.e2e), result.median(result.bare), result.children

        def cell(prefix: str, calls: bool = True, run: Run = run, n: int = n) -> str:
            text = f"{run.spent_in(prefix) / n * 1000:.1f}"
            return f"{text} ({run.calls_in(prefix) / n:.0f})" if calls else text

        other = (run.seconds - sum(run.spent.values())) / n * 1000
        print(f"{result.scenario.name:<15} {run.seconds / n * 1000:>7.1f} {cell('journal'):>13} "
              f"{cell('artifacts'):>11} {cell('submit', False):>7} "
              f"{bare.seconds / n * 1000:>7.1f} {cell('poll'):>10} {cell('sleep', False):>8} "
              f"{other:>6.1f}")


def print_port_calls(results: list[Result]) -> None:
    """Journal and artifact methods: calls per child and ms per call (median run)."""
    for result in results:
        run, n = result.median(result.e2e), result.children
        cells = []
        for key in sorted(run.spent, key=lambda key: -run.spent[key]):
            if key.startswith(("journal.", "artifacts.")):
                calls = run.calls[key]
                cells.append(f"{key} {calls / n:.2g}/child x {run.spent[key] / calls * 1000:.2f} ms")
        print(f"{result.scenario.name}: " + "; ".join(cells))


def print_bounds(results: list[Result]) -> None:
    for result in results:
        run, bare, name = result.median(result.e2e), result.median(result.bare), result.scenario.name
        interval = result.scenario.plan.profile.snapshot.timeouts.poll_interval_s
        sleep_share = run.spent_in("sleep") / run.seconds
        if result.scenario.bound == "protocol":
            waits = result.children * interval
            floor = waits + bare.seconds
            print(f"{name}: PROTOCOL-bound: floor = {result.children} children x {interval} s "
                  f"poll interval + the bare uploads = {waits:.1f} + {bare.seconds:.1f} = "
                  f"{floor:.1f} s; deliver {run.seconds:.1f} s = {run.seconds / floor:.2f}x the "
                  f"floor, {sleep_share:.0%} of it asleep")
        else:
            network = run.spent_in("submit") + run.spent_in("poll")
            print(f"{name}: ENGINE-bound: {sleep_share:.0%} asleep; "
                  f"{(run.seconds - network) / run.seconds:.0%} of deliver time outside the "
                  f"transport (journal {run.spent_in('journal') / run.seconds:.0%}, artifacts "
                  f"{run.spent_in('artifacts') / run.seconds:.0%}); submits take "
                  f"{run.spent_in('submit') / bare.seconds:.2f}x the bare uploads")


# -- main ------------------------------------------------------------------------------------


@contextlib.contextmanager
def journal_factory(kind: str) -> Iterator[tuple[JournalFactory, str]]:
    if kind == "sqlite":
        yield sqlite_journal, "SQLite (WAL, one file per run)"
        return
    import journal as journal_bench  # noqa: PLC0415 (benchmarks/journal.py, on sys.path here)

    from dpone.journal.postgres import PostgresJournal  # noqa: PLC0415

    with journal_bench.postgres_server(None) as (dsn, origin):

        @contextlib.contextmanager
        def postgres_journal(_scratch: Path, environment_id: str) -> Iterator[DeliveryJournalPort]:
            with journal_bench.fresh_schema(dsn) as scoped:
                journal = PostgresJournal(scoped, environment_id=environment_id,
                                          require_durability=False)
                try:
                    journal.migrate()
                    yield journal
                finally:
                    journal.close()

        yield postgres_journal, f"PostgreSQL, fresh schema per run, {origin}"


def split_scopes(sealed: Sealed) -> int:
    """Scopes (days) whose rows the planner split over several sibling children."""
    scopes = [(c.descriptor.scope_from, c.descriptor.scope_to) for c in sealed.topology.children]
    return sum(1 for scope in set(scopes) if scopes.count(scope) > 1)


def print_sealing(sealed: list[Sealed]) -> None:
    print("\n== sealing (not part of the delivery figures)")
    for item in sealed:
        sizes = [child.request.content_length for child in item.topology.children]
        print(f"{item.name:<20} {item.rows:>9,} rows: freeze {item.freeze_s:5.2f} s, seal "
              f"{item.seal_s:5.2f} s; {len(sizes)} children ({split_scopes(item)} days split "
              f"over several), {item.wire_bytes / MB:.1f} MB on the wire (bodies "
              f"{min(sizes) / MB:.2f}..{max(sizes) / MB:.2f} MB)")


def measure(scenarios: list[Scenario], repeat: int, token: str, open_journal: JournalFactory,
            scratch: Path) -> list[Result]:
    results = []
    for scenario in scenarios:
        bodies = bare_requests(scenario.sealed)
        limit = scenario.receiver.config.max_decoded_bytes
        result = Result(scenario, [], [])
        for index in range(repeat):
            result.parse_s.append(receiver_parse_s(bodies, limit))
            result.bare.append(bare_upload(scenario, bodies, token))
            result.e2e.append(supervised(scenario, open_journal,
                                         scratch / f"run-{scenario.name}-{index}"))
        print(f"  {scenario.name}: {repeat} pair(s) in "
              f"{sum(run.seconds for run in result.bare + result.e2e):.1f} s; receiver "
              f"decoding alone {sum(result.parse_s):.1f} s", flush=True)
        results.append(result)
    return results


def run(args: argparse.Namespace, scratch: Path, open_journal: JournalFactory,
        journal_note: str) -> None:
    token = secrets.token_urlsafe(24)
    os.environ[TOKEN_ENV] = token
    registry, generate_s = timed(lambda: write_registry(scratch / "registry", args.rows,
                                                        args.seed))
    csv_mb = (registry / "data" / "measurements.csv").stat().st_size / MB
    print(f"== delivery benchmark: {args.rows:,} synthetic rows ({csv_mb:.1f} MB CSV, written "
          f"in {generate_s:.1f} s) over [{INTERVAL[0]}, {INTERVAL[1]}); journal: "
          f"{journal_note}; {args.repeat} bare/deliver pair(s) per scenario", flush=True)
    sync = seal(registry, "measurements_sync", scratch / "sealed-sync")
    jobs = seal(registry, "measurements_async", scratch / "sealed-async")
    print_sealing([sync, jobs])
    _, contract_s = timed(load_state_contract)
    print(f"journal state contract loaded in {contract_s:.2f} s (once per process, "
          "before the first journal call; kept out of the delivery figures)\n", flush=True)
    config: dict[str, Any] = {"token": token, "retained_rows": 0}
    with ReceiverThread(ReceiverConfig(processing_seconds=SHIPPED_PROCESSING_S, **config)) \
            as shipped, ReceiverThread(ReceiverConfig(processing_seconds=0, **config)) as instant:
        scenarios = [
            Scenario("sync", sync, *pointed(sync.plan, shipped.base_url), shipped, "engine"),
            Scenario("async shipped", jobs, *pointed(jobs.plan, shipped.base_url), shipped,
                     "protocol"),
            Scenario("async engine", jobs, *pointed(jobs.plan, instant.base_url,
                                                    poll_interval_s=0), instant, "engine"),
        ]
        results = measure(scenarios, args.repeat, token, open_journal, scratch)
    print("\n== throughput on loopback, median of the runs (MB = request body bytes on the "
          "wire; overhead = deliver's time outside its submit sends, per child)")
    print_throughput(results)
    print("\n== where deliver's time goes: ms per child (calls per child), median run; "
          "(bare) = the bare upload per child")
    print_breakdown(results)
    print("\n== journal and artifact calls: per child x ms per call, median run")
    print_port_calls(results)
    print("\n== bounds")
    print_bounds(results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000, help="synthetic rows (300,000)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="bare/deliver pairs per scenario; medians are printed (3)")
    parser.add_argument("--journal", choices=("sqlite", "postgres"), default="sqlite",
                        help="sqlite (a file per run) or postgres (a throwaway fsync cluster, "
                        "a fresh schema per run)")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.rows < 1:
        parser.error("--rows and --repeat must be positive")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpone-deliver-bench-") as temporary, \
            journal_factory(args.journal) as (open_journal, journal_note):
        try:
            run(args, Path(temporary), open_journal, journal_note)
        except RuntimeError as exc:
            print(f"\nbenchmark stopped: {exc}")
            return 1
    print(f"\ntotal wall time {time.perf_counter() - started:.1f} s; the machine is shared: "
          "compare the ratios to the bare upload, not absolute figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
