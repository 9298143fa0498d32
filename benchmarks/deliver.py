"""End-to-end delivery throughput: `dpone deliver` next to a naive client and a bare upload.

Run: ``.venv/bin/python benchmarks/deliver.py [--rows N] [--repeat K] [--scenario sync|async|both]
[--journal sqlite|postgres|both] [--peer naive|none] [--receiver lines|mock] [--format text|json]
[--output FILE]`` (default 100,000 rows, 3 repeats, both scenarios, SQLite; see
``benchmarks/README.md`` for what each row means).

One dataset per run (``_deliver_data.py``: the example registry's measurements table, N rows
over 60 business days) and one receiver in its own process (``_line_receiver.py``: it only
counts rows). For each scenario (sync NDJSON in 10,000-row batches; async CSV+gzip jobs with
poll interval 0) and journal, K repeats, the order of the paths rotating each repeat:

* ``dpone``: ``dpone deliver WORKLOAD --wait`` as a cold subprocess with a fresh journal,
  artifact store and plan directory: imports, freeze, seal, admission, sends, verification;
  wall time and its own peak RSS;
* ``naive`` (``--peer naive``): ``_naive.py`` as a subprocess: ``requests``, ``csv``,
  ``json.dumps`` per row, the same receiver, token and batch size, no journal;
* ``bare``: one ``httpx.Client`` in this process POSTing the sealed request bodies that the
  first dpone run of the scenario sealed and sent (read from its artifact store, digests
  checked, held in memory): the transport's limit;
* ``checked``: the same POSTs, each payload read from the store sealed in this process and its
  SHA-256 checked just before its POST: the least a sender does that never sends altered bytes;
* then, apart from those figures, the boundary frozen and sealed again and ``deliver()`` run in
  this process with timing proxies on its ports: the per-child journal and artifact cost, and
  the stage report (``_deliver_stages.py``: freeze, seal, admit, drive and verify, each against
  a limit measured in the same run, and the stage floor);
* ``no-wire`` (sync only): ``deliver()`` in this process the same way, through a transport that
  answers every batch at once with no socket (``_answering.py``): the drive's own work per child
  with nothing to wait for on the wire.

After every run the receiver's ledger must show every row applied exactly once. Then the cold
start of the CLI: ``python -X importtime`` of ``dpone --help`` and the wall time of
``dpone --help`` and ``dpone delivery inspect --help`` (median of 5).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpone

import _allocator  # noqa: F401  (first: before pyarrow loads)
import _coldstart
import _deliver_data as data
import _deliver_paths as paths
import _deliver_stages as stages
import _lag_proxy as lag
from _answering import answering_transport
from _deliver_cpu import PidSource
from _deliver_report import MB, Result, Sealing, render

from dpone.artifacts import LocalArtifactStore
from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.journal import DeliveryJournalPort
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.seal import seal_boundary

SEED = 20260801
TESTS = Path(__file__).resolve().parent.parent / "tests"


@dataclass
class Journal:
    """One journal kind: a fresh journal per run, for the CLI (a URL) and in process."""

    name: str
    note: str
    cli_url: Callable[[Path], contextlib.AbstractContextManager[str]]
    in_process: paths.JournalFactory
    server_pid: PidSource | None = None
    """The journal server's root process (PostgreSQL's postmaster), watched for its CPU."""


@contextlib.contextmanager
def _sqlite_url(scratch: Path) -> Iterator[str]:
    yield str(scratch / "journal.sqlite3")


@contextlib.contextmanager
def journals(names: list[str], rtt_ms: float = 0.0) -> Iterator[list[Journal]]:
    """The chosen journals; ``rtt_ms``: PostgreSQL reached through ``_lag_proxy`` (each
    direction held half of it), as a journal on another host."""
    chosen = []
    if "sqlite" in names:
        chosen.append(Journal("sqlite", "SQLite journal (WAL, a fresh file per run)", _sqlite_url,
                              paths.sqlite_journal))
    if "postgres" not in names:
        yield chosen
        return
    sys.path.insert(0, str(TESTS))
    import psycopg  # noqa: PLC0415
    from psycopg import sql  # noqa: PLC0415

    from dpone.journal.postgres import PostgresJournal  # noqa: PLC0415
    from support.postgres_cluster import ThrowawayCluster  # noqa: PLC0415

    with ThrowawayCluster(fsync=True) as cluster, contextlib.ExitStack() as stack:
        served = cluster.dsn
        if rtt_ms > 0:
            port = stack.enter_context(lag.lagged(cluster.primary.port, rtt_ms / 2))
            served = served.replace(f":{cluster.primary.port}/", f":{port}/")

        @contextlib.contextmanager
        def schema_url(_scratch: Path) -> Iterator[str]:
            schema = "bench_" + secrets.token_hex(6)
            with psycopg.connect(cluster.dsn, autocommit=True) as admin:
                admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
            try:
                yield f"{served}?options={quote(f'-c search_path={schema},public')}"
            finally:
                with psycopg.connect(cluster.dsn, autocommit=True) as admin:
                    admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(
                        sql.Identifier(schema)))

        @contextlib.contextmanager
        def postgres_journal(scratch: Path, environment_id: str) -> Iterator[DeliveryJournalPort]:
            with schema_url(scratch) as url:
                journal = PostgresJournal(url, environment_id=environment_id)
                try:
                    journal.migrate()
                    yield journal
                finally:
                    journal.close()

        with psycopg.connect(cluster.dsn) as probe:
            settings = [str(probe.execute(f"SHOW {name}").fetchone()[0])  # type: ignore[index]
                        for name in ("server_version", "fsync", "synchronous_commit")]
        postmaster = cluster.primary.data / "postmaster.pid"
        remote = "" if rtt_ms <= 0 else (
            f", through a proxy holding each direction {rtt_ms / 2:g} ms: a round trip "
            f"{lag.round_trip_ms(served):.2f} ms, against {lag.round_trip_ms(cluster.dsn):.2f} "
            "ms direct")
        chosen.append(Journal("postgres", f"PostgreSQL {settings[0].split()[0]} journal (fsync="
                              f"{settings[1]}, synchronous_commit={settings[2]}, a fresh schema "
                              f"per run{remote})", schema_url, postgres_journal,
                              lambda: int(postmaster.read_text().split()[0])))
        yield chosen


@dataclass
class Scenario:
    name: str
    workload: Path
    resource: str
    plan: RestDeliveryPlan
    plan_digest: str
    topology: SealedTopology
    sealed_root: Path
    sealing: Sealing
    bodies: paths.Bodies | None = None
    limits: stages.Limits | None = None


def seal_into(plan: RestDeliveryPlan, plan_digest: str, registry: Path,
              root: Path) -> tuple[SealedTopology, stages.Timed, stages.Timed]:
    """Freeze and seal the boundary into a fresh store at ``root``: the topology, then the
    freeze's and the seal's (planning, encoding, publishing) wall and CPU seconds (this
    process's, every thread's)."""
    frozen_at: list[tuple[float, float]] = []
    start = stages.Timed.now()
    sealed = seal_boundary(plan, plan_digest, LocalArtifactStore(root), registry_root=registry,
                           interval_start=data.INTERVAL[0], interval_end=data.INTERVAL[1],
                           on_frozen=lambda _parent: frozen_at.append(stages.Timed.now()))
    end = stages.Timed.now()
    return (sealed.topology, stages.Timed.between(start, frozen_at[0]),
            stages.Timed.between(frozen_at[0], end))


def seal(name: str, registry: Path, scratch: Path) -> Scenario:
    """Compile and seal the scenario's workload in this process (the bare upload's topology and
    the in-process run's input; the CLI seals its own, checked equal by digest)."""
    workload_name, resource = data.WORKLOADS[name]
    workload = registry / "workloads" / f"{workload_name}.yaml"
    compiled = compile_workload(workload, registry)
    root = scratch / f"sealed-{name}"
    topology, freeze, sealing = seal_into(compiled.plan, compiled.digest, registry, root)
    wire = sum(child.request.content_length for child in topology.children)
    return Scenario(name, workload, resource, compiled.plan, compiled.digest, topology, root,
                    Sealing(topology.total_rows, len(topology.children), wire, freeze.seconds,
                            sealing.seconds))


class Bench:
    def __init__(self, args: argparse.Namespace, scratch: Path, receiver: paths.Receiver,
                 registry: Path, csv_file: Path, token: str, log: TextIO) -> None:
        self.args, self.scratch, self.receiver = args, scratch, receiver
        self.registry, self.csv_file, self.token, self.log = registry, csv_file, token, log

    def say(self, text: str) -> None:
        print(text, file=self.log, flush=True)

    def one(self, path: str, scenario: Scenario, journal: Journal, scratch: Path) -> paths.Run:
        self.receiver.reset()
        rows, sealing = scenario.sealing.rows, scenario.sealing
        if path in ("dpone", "telemetry"):
            interval = (data.INTERVAL[0].isoformat(), data.INTERVAL[1].isoformat())
            with journal.cli_url(scratch) as url:
                run = paths.dpone_cli(scenario.workload, self.registry, interval, url, scratch,
                                      self.token, rows, sealing.wire_bytes, sealing.children,
                                      telemetry=path == "telemetry")
            if scenario.bodies is None and "bare" in self.paths:
                scenario.bodies = paths.sealed_bodies(scenario.plan, scenario.topology,
                                                      scratch / "artifacts")
        elif path == "naive":
            run = paths.naive_client(scenario.name, self.csv_file, self.receiver.base_url,
                                     scenario.resource, scratch, self.token)
        elif path == "checked":
            run = paths.checked_upload(scenario.plan, scenario.topology, scenario.sealed_root,
                                       self.receiver.base_url, self.token, rows,
                                       self.watch(journal))
        elif path == "no-wire":
            run = paths.in_process(scenario.plan, scenario.topology, scenario.sealed_root,
                                   journal.in_process, scratch, sealing.wire_bytes,
                                   self.watch(journal), answering_transport, label=path)
        elif path == "bare":
            if scenario.bodies is None:
                raise RuntimeError("the bare upload needs a dpone run's sealed bodies first")
            run = paths.bare_upload(scenario.plan, scenario.bodies, self.receiver.base_url,
                                    self.token, rows, self.watch(journal))
        else:  # sealed again from the CSV file, each stage timed (the stage report)
            root = scratch / "sealed"
            topology, freeze, sealing_stage = seal_into(scenario.plan, scenario.plan_digest,
                                                        self.registry, root)
            if topology != scenario.topology:
                raise RuntimeError(f"{scenario.name}: sealing again gave another topology")
            run = paths.in_process(scenario.plan, topology, root, journal.in_process, scratch,
                                   sealing.wire_bytes, self.watch(journal))
            run.spent.update({"stage.freeze": freeze.seconds, "stage.seal": sealing_stage.seconds,
                              "stage_cpu.freeze": freeze.cpu_s,
                              "stage_cpu.seal": sealing_stage.cpu_s})
        if path != "no-wire":  # the answering transport sends nothing to the receiver
            ledger = self.receiver.check(f"{scenario.name}/{journal.name}/{path}", run.rows)
            run.ledger = {key: ledger[key] for key in ("rows_total", "duplicate_mutations")}
        shutil.rmtree(scratch, ignore_errors=True)
        return run

    def watch(self, journal: Journal) -> dict[str, PidSource]:
        """The processes besides this one whose CPU an in-process path reports."""
        watch: dict[str, PidSource] = {"receiver": lambda: self.receiver.process.pid}
        if journal.server_pid is not None:
            watch["journal_server"] = journal.server_pid
        return watch

    @property
    def paths(self) -> list[str]:
        return ["dpone", *(["telemetry"] if self.args.telemetry else []),
                *(["naive"] if self.args.peer == "naive" else []), "bare", "checked"]

    def measure(self, scenario: Scenario, journal: Journal) -> Result:
        result = Result(scenario.name, journal.name, scenario.sealing, scenario.limits)
        for index in range(self.args.repeat):
            order = self.paths[index % len(self.paths):] + self.paths[:index % len(self.paths)]
            wireless = ["no-wire"] if scenario.name == "sync" else []  # batches only
            for path in [*order, "in-process", *wireless]:
                scratch = self.scratch / f"run-{scenario.name}-{journal.name}-{index}-{path}"
                run = self.one(path, scenario, journal, scratch)
                result.runs.setdefault(path, []).append(run)
                rss = "" if run.peak_rss_mb is None else f", peak RSS {run.peak_rss_mb:.0f} MB"
                self.say(f"  [{scenario.name}/{journal.name}] repeat {index + 1}/"
                         f"{self.args.repeat} {path:<10} {run.seconds:7.2f} s, "
                         f"{run.rows / run.seconds:>9,.0f} rows/s{rss}")
        return result


def run(args: argparse.Namespace, scratch: Path, log: TextIO) -> dict[str, Any]:
    token = secrets.token_urlsafe(24)
    os.environ[paths.TOKEN_ENV] = token  # the in-process deliver() resolves it like the CLI
    csv_file = scratch / "measurements.csv"
    start = time.perf_counter()
    data.synthetic_csv(csv_file, args.rows, args.seed)
    print(f"== delivery benchmark: {args.rows:,} rows ({csv_file.stat().st_size / MB:.1f} MB "
          f"CSV, written in {time.perf_counter() - start:.1f} s) over {data.DAYS} business days "
          f"[{data.INTERVAL[0]}, {data.INTERVAL[1]}); receiver: {args.receiver} (own process); "
          f"{args.repeat} repeat(s)", file=log, flush=True)
    scenarios_wanted = ["sync", "async"] if args.scenario == "both" else [args.scenario]
    journal_names = ["sqlite", "postgres"] if args.journal == "both" else [args.journal]
    receiver = paths.Receiver(args.receiver, token, scratch)
    results: list[tuple[Result, str]] = []
    try:
        registry = data.write_registry(scratch / "registry", csv_file, receiver.base_url)
        with journals(journal_names, args.journal_rtt_ms) as chosen:
            bench = Bench(args, scratch, receiver, registry, csv_file, token, log)
            for name in scenarios_wanted:
                scenario = seal(name, registry, scratch)
                s = scenario.sealing
                bench.say(f"sealed {name} in this process: freeze {s.freeze_s:.2f} s, seal "
                          f"{s.seal_s:.2f} s; {s.children} children, {s.wire_bytes / MB:.1f} MB")
                if not args.skip_stage_limits:
                    scenario.limits = limits = stages.measure_limits(
                        scenario.plan, scenario.topology, csv_file, scratch / f"limits-{name}",
                        "ndjson" if name == "sync" else "csv_gzip")
                    bench.say(f"same-run limits of {name}: freeze {limits.freeze_s:.2f} s, "
                              f"seal {limits.seal_s:.2f} s on {limits.workers} threads "
                              f"({limits.seal_one_thread_s:.2f} s on one)")
                for journal in chosen:
                    results.append((bench.measure(scenario, journal), journal.note))
                scenario.bodies = None
                shutil.rmtree(scenario.sealed_root)
    finally:
        receiver.close()
    cold = _coldstart.cold_start() if not args.skip_cold_start else None
    lines: list[str] = []
    for result, note in results:
        lines += ["", *render(result, note, args.repeat)]
    if cold is not None:
        lines += ["", "== cold start", *_coldstart.render(cold)]
    return {"schema": "dpone.benchmark.deliver.v1", "rows": args.rows, "days": data.DAYS,
            "repeat": args.repeat, "receiver": args.receiver, "peer": args.peer,
            "results": [result.to_json() for result, _ in results],
            "cold_start": None if cold is None else cold.to_json(), "text": lines}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="synthetic rows (100,000)")
    parser.add_argument("--repeat", type=int, default=3, help="repeats per path; medians (3)")
    parser.add_argument("--scenario", choices=("sync", "async", "both"), default="both")
    parser.add_argument("--journal", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--journal-rtt-ms", type=float, default=0.0,
                        help="reach the PostgreSQL journal through a proxy that holds each "
                             "direction half of this many ms, as a journal on another host (0: "
                             "directly)")
    parser.add_argument("--peer", choices=("naive", "none"), default="naive")
    parser.add_argument("--receiver", choices=("lines", "mock"), default="lines",
                        help="lines: the row-counting receiver; mock: `dpone receiver serve` "
                        "(parses every row)")
    parser.add_argument("--skip-cold-start", action="store_true")
    parser.add_argument("--skip-stage-limits", action="store_true",
                        help="leave the stage report's limits out (they hold the whole table in "
                             "memory and one more copy of it on scratch disk)")
    parser.add_argument("--telemetry", action="store_true",
                        help="also run dpone deliver with JSON log events and --metrics-port "
                             "(path telemetry), and print its time over the plain run's")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--output", type=Path, help="also write the JSON document here")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.rows < 1:
        parser.error("--rows and --repeat must be positive")
    log = sys.stderr if args.format == "json" else sys.stdout
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpone-deliver-bench-") as temporary:
        try:
            document = run(args, Path(temporary), log)
        except (RuntimeError, DponeError) as exc:
            print(f"\nbenchmark stopped: {exc}", file=log)
            return 1
    document["wall_s"] = round(time.perf_counter() - started, 1)
    text = document.pop("text")
    if args.output is not None:
        args.output.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    if args.format == "json":
        print(json.dumps(document, indent=2))
    else:
        print("\n".join(text))
        print(f"\ntotal wall time {document['wall_s']:.1f} s; the machine is shared: compare "
              "the ratios measured in one run, not absolute figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
