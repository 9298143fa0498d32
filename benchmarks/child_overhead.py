"""Per-child cost of the journal and of the artifact writes in a synchronous delivery.

Run: ``.venv/bin/python benchmarks/child_overhead.py [--rows-per-child N] [--repeat K]
[--journal sqlite|postgres|both] [--dsn DSN]`` (default 16 rows per child, about 200 children, 3 repeats,
both dialects; about a minute on 2 cores).

Writes a scratch copy of the example registry whose synchronous NDJSON profile
(``mock.batch-ndjson@1``) plans at most N rows per child (and takes a submit turn every
millisecond), so the example's 3,203 rows become
about 200 small children: the payloads are tiny on purpose, this measures what each child costs
besides its upload. It seals ``measurements_sync`` once, then delivers it K times per dialect
with ``dpone.executor.supervisor.deliver`` to the in-process mock receiver (loopback, jobs end at
once, no rows retained), each run with a fresh journal and a fresh artifact store (the sealed
artifacts hard-linked in). The journal and the store are wrapped in timing proxies; the
journal's transactions are counted where the adapter runs them (``JournalBase._run``, one
call = one transaction = one commit), with their statements (``Tx`` of each dialect), and
``os.fsync`` is counted while the delivery runs (the SQLite driver's own fsyncs are not Python
calls and are not counted: they are part of its transactions).

PostgreSQL runs on a throwaway cluster with fsync on and ``synchronous_commit`` at its default
(on), or on the server ``--dsn`` names, a fresh schema per run; SQLite on a file in WAL mode,
every critical commit synced (``synchronous=FULL``: the journal's own setting). The report
gives, per dialect and median run: ms per child spent in journal calls and in artifact calls,
transactions per child by kind (``write``: leases and attempt planning; ``critical``:
admission, SUBMITTING, transitions, promotion; ``read``), statements per child, artifact writes
and ``os.fsync`` calls per child. The machine is shared
and noisy: the counts are exact, the times are not (compare runs of one invocation).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _deliver_paths import Clock, TimedPort, sqlite_journal

from dpone.artifacts import LocalArtifactStore
from dpone.compiler import compile_workload
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.seal import seal_boundary
from dpone.executor.supervisor import DeliveryCompleted, deliver
from dpone.executor.transport import transport_for
from dpone.journal.postgres import _connection as postgres_connection
from dpone.journal.sqlite import _connection as sqlite_connection
from dpone.receiver import ReceiverConfig, ReceiverThread

BENCHMARKS = Path(__file__).resolve().parent
EXAMPLES = BENCHMARKS.parent / "examples"
PROFILE = "profiles/mock.batch-ndjson@1.yaml"
WORKLOAD = "measurements_sync"
INTERVAL = ("2026-08-01", "2026-09-01")
TOKEN_ENV = "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN"
HOLDER = "bench-child-overhead"
DIALECTS = ("sqlite", "postgres")


# -- counting ------------------------------------------------------------------------------------


class Tally(Clock):
    """Seconds (``spent``) and calls per category (:class:`Clock`), transactions by kind,
    statements, fsyncs."""

    def __init__(self) -> None:
        super().__init__()
        self.transactions: Counter[str] = Counter()
        self.statements = 0
        self.fsyncs = 0


@contextlib.contextmanager
def counting(tally: Tally, journal: Any) -> Iterator[None]:
    """Count the journal's transactions (``_run``), both dialects' statements and os.fsync."""
    run = journal._run

    def transaction(work: Callable[[Any], Any], kind: str) -> Any:
        tally.transactions[kind] += 1
        return run(work, kind)

    def statement(original: Callable[..., Any]) -> Callable[..., Any]:
        def execute(self: Any, *args: Any, **kwargs: Any) -> Any:
            tally.statements += 1
            return original(self, *args, **kwargs)
        return execute

    fsync = os.fsync

    def counted_fsync(fd: int) -> None:
        tally.fsyncs += 1
        fsync(fd)

    patched = [(module.Tx, name, getattr(module.Tx, name))
               for module in (sqlite_connection, postgres_connection)
               for name in ("_execute", "run_many")]
    journal._run = transaction
    for owner, name, original in patched:
        setattr(owner, name, statement(original))
    os.fsync = counted_fsync
    try:
        yield
    finally:
        os.fsync = fsync
        for owner, name, original in patched:
            setattr(owner, name, original)
        del journal._run


# -- the scratch registry and the sealed delivery -------------------------------------------------


def write_registry(root: Path, rows_per_child: int) -> Path:
    """The example registry with the sync profile planning at most ``rows_per_child`` rows."""
    shutil.copytree(EXAMPLES, root)
    profile = root / PROFILE
    text = profile.read_text(encoding="utf-8")
    text = re.sub(r"max_rows: \d+", f"max_rows: {rows_per_child}", text)
    text = re.sub(r"planning_rows: \d+", f"planning_rows: {rows_per_child}", text)
    # A submit turn every millisecond: the receiver account's shared rate (one turn every
    # 100 ms in the example) would make the run wait, not measure what a child costs.
    text = re.sub(r"submit_per_minute: \d+", "submit_per_minute: 60000", text)
    profile.write_text(text, encoding="utf-8")
    return root


@dataclass
class Sealed:
    plan: RestDeliveryPlan
    topology: SealedTopology
    store: LocalArtifactStore


def seal(registry: Path, root: Path) -> Sealed:
    compiled = compile_workload(registry / "workloads" / f"{WORKLOAD}.yaml", registry)
    store = LocalArtifactStore(root)
    start, end = (dt.date.fromisoformat(day) for day in INTERVAL)
    sealed = seal_boundary(compiled.plan, compiled.digest, store, registry_root=registry,
                           interval_start=start, interval_end=end)
    return Sealed(compiled.plan, sealed.topology, store)


def pointed(plan: RestDeliveryPlan, base_url: str) -> RestDeliveryPlan:
    binding = plan.binding.snapshot.model_copy(update={"authority": base_url})
    return plan.model_copy(update={"binding": plan.binding.model_copy(
        update={"snapshot": binding})})


JournalFactory = Callable[[Path, str], contextlib.AbstractContextManager[Any]]


@contextlib.contextmanager
def postgres_factory(server: str | None = None) -> Iterator[tuple[JournalFactory, str]]:
    """A fresh schema per run on ``server`` (a DSN), or on a throwaway cluster with fsync on."""
    sys.path.insert(0, str(BENCHMARKS))
    import journal as journal_bench  # noqa: PLC0415 (benchmarks/journal.py)

    from dpone.journal.postgres import PostgresJournal  # noqa: PLC0415

    with journal_bench.postgres_server(server) as (dsn, origin):

        @contextlib.contextmanager
        def postgres_journal(_scratch: Path, environment_id: str) -> Iterator[Any]:
            with journal_bench.fresh_schema(dsn) as scoped:
                journal = PostgresJournal(scoped, environment_id=environment_id,
                                          require_durability=False)
                try:
                    journal.migrate()
                    yield journal
                finally:
                    journal.close()

        yield postgres_journal, origin


@dataclass
class Run:
    children: int
    tally: Tally

    def per_child(self, value: float) -> float:
        return value / self.children

    def ms(self, prefix: str) -> float:
        spent = sum(s for key, s in self.tally.spent.items() if key.startswith(prefix + "."))
        return self.per_child(spent) * 1000

    def writes(self) -> int:
        return sum(n for key, n in self.tally.calls.items()
                   if key in ("artifacts.put_bytes", "artifacts.put_stream"))


def delivered(sealed: Sealed, plan: RestDeliveryPlan, receiver: ReceiverThread,
              open_journal: JournalFactory, scratch: Path) -> Run:
    scratch.mkdir(parents=True)
    shutil.copytree(sealed.store.root, scratch / "artifacts", copy_function=os.link)
    store = LocalArtifactStore(scratch / "artifacts")
    receiver.state.reset()
    tally = Tally()
    environment_id = plan.environment.snapshot.environment_id
    with open_journal(scratch, environment_id) as journal, transport_for(plan) as transport, \
            counting(tally, journal):
        result = deliver(plan, sealed.topology, TimedPort(journal, tally, "journal"),
                         TimedPort(store, tally, "artifacts"), transport, holder=HOLDER)
    if not isinstance(result, DeliveryCompleted):
        raise RuntimeError(f"the delivery did not complete: {result!r}")
    ledger = receiver.state.ledger.snapshot()
    if ledger["rows_total"] != sealed.topology.total_rows or ledger["duplicate_mutations"]:
        raise RuntimeError(f"the receiver applied {ledger['rows_total']} rows "
                           f"({ledger['duplicate_mutations']} duplicates)")
    shutil.rmtree(scratch)
    return Run(len(sealed.topology.children), tally)


# -- report ------------------------------------------------------------------------------------


def print_runs(dialect: str, note: str, runs: list[Run]) -> None:
    run = sorted(runs, key=lambda r: r.ms("journal"))[(len(runs) - 1) // 2]
    kinds = ", ".join(f"{kind} {run.per_child(n):.2f}"
                      for kind, n in sorted(run.tally.transactions.items()))
    total = sum(run.tally.transactions.values())
    print(f"\n== {dialect}: {note}; {run.children} children, median of {len(runs)} run(s)")
    for port in ("journal", "artifacts"):
        spread = ", ".join(f"{r.ms(port):.2f}" for r in runs)
        print(f"{port:<9} {run.ms(port):6.2f} ms/child  (runs: {spread})")
    print(f"transactions (= commits) {run.per_child(total):.2f}/child: {kinds}; statements "
          f"{run.per_child(run.tally.statements):.2f}/child")
    print(f"artifact writes {run.per_child(run.writes()):.2f}/child; os.fsync "
          f"{run.per_child(run.tally.fsyncs):.2f}/child")
    cells = [f"{key} {run.per_child(calls):.2g}/child x "
             f"{run.tally.spent[key] / calls * 1000:.2f} ms"
             for key, calls in sorted(run.tally.calls.items(),
                                      key=lambda item: -run.tally.spent[item[0]])]
    print("calls: " + "; ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows-per-child", type=int, default=16,
                        help="the profile's max_rows in the scratch registry (16)")
    parser.add_argument("--repeat", type=int, default=3, help="deliveries per dialect (3)")
    parser.add_argument("--journal", choices=(*DIALECTS, "both"), default="both")
    parser.add_argument("--dsn", help="an existing PostgreSQL server (default: a throwaway "
                        "cluster with fsync on)")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.rows_per_child < 1:
        parser.error("--repeat and --rows-per-child must be positive")
    token = secrets.token_urlsafe(24)
    os.environ[TOKEN_ENV] = token
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpone-child-bench-") as temporary, \
            ReceiverThread(ReceiverConfig(token=token, processing_seconds=0,
                                          retained_rows=0)) as receiver, \
            contextlib.ExitStack() as stack:
        scratch = Path(temporary)
        sealed = seal(write_registry(scratch / "registry", args.rows_per_child),
                      scratch / "sealed")
        plan = pointed(sealed.plan, receiver.base_url)
        print(f"== per-child journal and artifact cost: {len(sealed.topology.children)} sync "
              f"NDJSON children of <= {args.rows_per_child} rows "
              f"({sealed.topology.total_rows:,} rows), {args.repeat} run(s) per dialect")
        dialects = DIALECTS if args.journal == "both" else (args.journal,)
        for dialect in dialects:
            factory: JournalFactory
            if dialect == "sqlite":
                factory, note = sqlite_journal, ("WAL, synchronous=FULL on critical commits, "
                                                  "a file per run")
            else:
                factory, origin = stack.enter_context(postgres_factory(args.dsn))
                note = f"synchronous_commit on, fsync on, a schema per run, {origin}"
            runs = [delivered(sealed, plan, receiver, factory, scratch / f"{dialect}-{index}")
                    for index in range(args.repeat)]
            print_runs(dialect, note, runs)
    print(f"\ntotal wall time {time.perf_counter() - started:.1f} s; the machine is shared: "
          "the counts are exact, the times are noisy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
