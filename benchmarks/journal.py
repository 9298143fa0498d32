"""Journal throughput: admissions and guarded CAS transitions next to a bare CAS UPDATE.

Run: ``.venv/bin/python benchmarks/journal.py [--seconds N] [--dsn DSN]`` (default 10 s per
measurement, about a minute and a half in all).

Without ``--dsn`` a throwaway PostgreSQL cluster is started with fsync on
(``tests/support/postgres_cluster.py``; ``synchronous_commit`` keeps its default, on) and removed at
the end. Either way the run migrates a fresh schema of its own and, on the same server in the
same run, measures through the public journal port only:

* ``admit_parent`` of a 100-child topology: distinct parents, each in its own effect conflict
  domain so no fence refuses (admissions/s and child rows admitted/s);
* ``transition`` on one connection: the ``waiting_poll_running`` self-loop (waiting -> waiting,
  observation lease, revision CAS, one observation row appended), repeated on one child;
* the machine's limit: a bare ``UPDATE t SET v = v + 1, revision = revision + 1 WHERE id = 1
  AND revision = %s``, one transaction each, psycopg autocommit. It runs in two halves, before
  and after the journal measurements, so drift on a shared machine shows up in the halves.

The same admissions and transitions then run against ``SqliteJournal`` on a temporary file next
to a bare SQLite UPDATE (WAL, ``synchronous=FULL``, autocommit) in the same directory.

Times count only the port call (building the request models is excluded). The machine is
shared and noisy: compare the ratios to the bare UPDATE, not absolute figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import secrets
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from dpone.contracts import canonical_json, content_digest
from dpone.contracts.journal import (
    ChildAdmission,
    ChildOperation,
    DeliveryJournalPort,
    Generation,
    Lease,
    ParentAdmission,
    Tenancy,
    TransitionRequest,
)
from dpone.journal.postgres import PostgresJournal
from dpone.journal.sqlite import SqliteJournal

TESTS = Path(__file__).resolve().parent.parent / "tests"
ENVIRONMENT = "journal-bench"
NAMESPACE = content_digest(b"namespace:journal-bench")
CHILDREN = 100
JAN = dt.date(2026, 1, 1)
LEASE_TTL = 3600
BARE_UPDATE = "UPDATE t SET v = v + 1, revision = revision + 1 WHERE id = 1 AND revision = {}"
LOOP = "waiting_poll_running"


WalPosition = Callable[[], int]


@dataclass
class Row:
    measurement: str
    ops: int
    seconds: float
    cpu_seconds: float
    child_rows: int = 0
    wal_bytes: int | None = None
    note: str = ""

    @property
    def ops_per_s(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0


# -- requests ----------------------------------------------------------------------------------


def admission(index: int, children: int = CHILDREN) -> ParentAdmission:
    """Parent ``index``: ``children`` one-day scopes in a conflict domain of its own."""
    tenancy = Tenancy(operation_namespace=NAMESPACE, tenant_id="tenant-bench",
                      environment_id=ENVIRONMENT)
    route = f"bench-route-{index}"
    domain = content_digest(f"domain:bench-{index}".encode())
    end = JAN + dt.timedelta(days=children)
    generation = Generation(scheduled_interval_end_utc=dt.datetime.combine(
        end, dt.time(), tzinfo=dt.UTC), correction_revision=0)
    rows = []
    for ordinal in range(1, children + 1):
        scope_from = JAN + dt.timedelta(days=ordinal - 1)
        key = content_digest(f"{route}|{ordinal}|partition_replace|{end}".encode())
        intent = content_digest(f"{key}|intent".encode())
        rows.append(ChildAdmission(
            ordinal=ordinal, delivery_key=key,
            receiver_mutation_key=content_digest(f"{NAMESPACE}|{key}".encode()),
            mutation_intent_digest=intent, scope_from=scope_from,
            scope_to=scope_from + dt.timedelta(days=1), first_row=(ordinal - 1) * 1000,
            row_count=1000, payload_key=f"payloads/{intent[7:]}.csv.gz", payload_digest=intent,
            payload_document_key=f"payloads/{intent[7:]}.json", wire_bytes=40_000))
    plan = content_digest("|".join(c.mutation_intent_digest for c in rows).encode())
    return ParentAdmission(
        tenancy=tenancy, logical_route_id=route, plan_digest=plan,
        parent_plan_digest=content_digest(f"parent|{plan}".encode()),
        frozen_parent_digest=content_digest(f"frozen|{route}".encode()),
        profile_contract_digest=content_digest(b"profile:bench"),
        effect_conflict_domain=domain, mutation_kind="partition_replace",
        generation=generation, boundary_from=JAN, boundary_to=end, max_remote_jobs=4,
        children=tuple(rows))


def request(child: ChildOperation, transition_id: str, fact: str,
            **fields: object) -> TransitionRequest:
    return TransitionRequest(operation_id=child.operation_id, transition_id=transition_id,
                             expected_revision=child.revision, facts=(fact,),
                             **fields)  # type: ignore[arg-type]


def poll(child: ChildOperation, transition_id: str) -> TransitionRequest:
    return request(child, transition_id, "observation_recorded",
                   observation={"status": "running"})


# -- measurements ------------------------------------------------------------------------------


class Stopwatch:
    """Accumulates wall and client-process CPU time over the timed calls only."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu_seconds = 0.0

    def __enter__(self) -> Stopwatch:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds += time.perf_counter() - self._wall
        self.cpu_seconds += time.process_time() - self._cpu


def wal_delta(wal: WalPosition | None, start: int | None) -> int | None:
    return None if wal is None or start is None else wal() - start


def measure_admissions(journal: DeliveryJournalPort, seconds: float,
                       wal: WalPosition | None) -> Row:
    """Admit fresh 100-child parents until ``seconds`` of admit_parent time have passed."""
    index, ops, rows, watch = 1, 0, 0, Stopwatch()
    for _warmup in range(2):
        journal.admit_parent(admission(index))
        index += 1
    start = wal() if wal else None
    while watch.seconds < seconds:
        parent = admission(index)
        index += 1
        with watch:
            result = journal.admit_parent(parent)
        if result.resumed or len(result.parent.children) != CHILDREN:
            raise RuntimeError(f"admission {index} did not admit {CHILDREN} new children")
        ops += 1
        rows += len(result.parent.children)
    return Row(f"admit_parent, {CHILDREN}-child topology", ops, watch.seconds,
               watch.cpu_seconds, rows, wal_delta(wal, start), "one domain per parent")


def waiting_child(journal: DeliveryJournalPort) -> tuple[ChildOperation, Lease]:
    """A child driven sealed -> submitting -> accepted -> waiting, with its observation lease."""
    parent = journal.admit_parent(admission(0, children=1)).parent
    operation_id = parent.children[0].operation_id
    mutation = journal.acquire_lease(operation_id, "mutation", "bench-worker", LEASE_TTL)
    plan = journal.plan_attempt(operation_id, mutation)
    child = journal.enter_submitting(plan, content_digest(canonical_json(dict(plan.marker))),
                                     mutation, parent.children[0].revision)
    child = journal.transition(request(
        child, "submitting_async_receipt_accepted", "receipt_persisted",
        receipt={"job_id": "bench-job"}), mutation)
    observer = journal.acquire_lease(operation_id, "observation", "bench-observer", LEASE_TTL)
    child = journal.transition(poll(child, "accepted_poll_running"), observer)
    if child.state_name != "waiting":
        raise RuntimeError(f"expected the child in waiting, found {child.state_name}")
    return child, observer


def measure_transitions(journal: DeliveryJournalPort, seconds: float,
                        wal: WalPosition | None) -> Row:
    """Repeat the guarded waiting_poll_running CAS on one child, one connection."""
    child, observer = waiting_child(journal)
    for _warmup in range(20):
        child = journal.transition(poll(child, LOOP), observer)
    ops, watch = 0, Stopwatch()
    start = wal() if wal else None
    while watch.seconds < seconds:
        next_request = poll(child, LOOP)
        with watch:
            child = journal.transition(next_request, observer)
        ops += 1
    return Row(f"transition {LOOP} (CAS)", ops, watch.seconds, watch.cpu_seconds,
               wal_bytes=wal_delta(wal, start), note="waiting -> waiting, +1 observation row")


def measure_bare(update: Callable[[int], int], seconds: float, revision: int,
                 wal: WalPosition | None) -> tuple[Row, int]:
    """The bare single-row CAS UPDATE, one autocommit transaction each."""
    ops, watch = 0, Stopwatch()
    start = wal() if wal else None
    deadline = time.perf_counter() + seconds
    with watch:
        while time.perf_counter() < deadline:
            if update(revision) != 1:
                raise RuntimeError(f"bare CAS UPDATE missed revision {revision}")
            revision += 1
            ops += 1
    return Row("bare CAS UPDATE, autocommit", ops, watch.seconds, watch.cpu_seconds,
               wal_bytes=wal_delta(wal, start)), revision


def bracketed(update: Callable[[int], int], seconds: float, wal: WalPosition | None,
              journal_rows: Callable[[], list[Row]]) -> list[Row]:
    """Journal rows between two halves of the bare UPDATE; the bare row combines the halves."""
    for revision in range(50):  # warm up (psycopg prepares after a few executions)
        update(revision)
    before, revision = measure_bare(update, seconds / 2, 50, wal)
    rows = journal_rows()
    after, _ = measure_bare(update, seconds / 2, revision, wal)
    wal_bytes = (None if before.wal_bytes is None or after.wal_bytes is None
                 else before.wal_bytes + after.wal_bytes)
    bare = Row(before.measurement, before.ops + after.ops, before.seconds + after.seconds,
               before.cpu_seconds + after.cpu_seconds, wal_bytes=wal_bytes,
               note=f"halves {before.ops_per_s:,.0f} / {after.ops_per_s:,.0f} ops/s")
    return [*rows, bare]


# -- PostgreSQL --------------------------------------------------------------------------------


@contextmanager
def postgres_server(dsn: str | None) -> Iterator[tuple[str, str]]:
    """The server's DSN and a description; a throwaway fsync cluster unless ``dsn`` is given."""
    if dsn:
        yield dsn, "given --dsn"
        return
    sys.path.insert(0, str(TESTS))
    from support.postgres_cluster import ThrowawayCluster  # noqa: PLC0415 (tests/ joins sys.path here)

    with ThrowawayCluster(fsync=True) as cluster:
        yield cluster.dsn, f"throwaway cluster ({cluster.bindir})"


@contextmanager
def fresh_schema(dsn: str) -> Iterator[str]:
    """A DSN whose search_path is a new schema, dropped afterwards."""
    schema = "journal_bench_" + secrets.token_hex(4)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield make_conninfo(dsn, options=f"-c search_path={schema},public")
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def postgres_rows(dsn: str | None, seconds: float) -> tuple[list[str], list[Row]]:
    with postgres_server(dsn) as (server_dsn, origin), fresh_schema(server_dsn) as scoped:
        bare = psycopg.connect(scoped, autocommit=True)
        try:
            settings = [bare.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
                        for name in ("server_version", "fsync", "synchronous_commit")]
            bare.execute("CREATE TABLE t (id integer PRIMARY KEY, v bigint NOT NULL, "
                         "revision bigint NOT NULL)")
            bare.execute("INSERT INTO t VALUES (1, 0, 0)")
            statement = BARE_UPDATE.format("%s")

            def update(revision: int) -> int:
                return bare.execute(statement, (revision,)).rowcount

            def wal() -> int:  # read on the idle bare connection; a SELECT writes no WAL
                row = bare.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"
                                   ).fetchone()
                return int(row[0]) if row else 0

            journal = PostgresJournal(scoped, environment_id=ENVIRONMENT,
                                      require_durability=False)
            try:
                journal.migrate()
                rows = bracketed(update, seconds, wal, lambda: [
                    measure_admissions(journal, seconds, wal),
                    measure_transitions(journal, seconds, wal)])
            finally:
                journal.close()
        finally:
            bare.close()
    header = [f"PostgreSQL {settings[0]}, fsync={settings[1]}, "
              f"synchronous_commit={settings[2]}, {origin}"]
    return header, rows


# -- SQLite ------------------------------------------------------------------------------------


def sqlite_rows(seconds: float) -> tuple[list[str], list[Row]]:
    with tempfile.TemporaryDirectory(prefix="dpone-journal-bench-") as scratch:
        bare = sqlite3.connect(Path(scratch) / "bare.sqlite", isolation_level=None)
        try:
            mode = bare.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            bare.execute("PRAGMA synchronous=FULL")
            level = bare.execute("PRAGMA synchronous").fetchone()[0]
            bare.execute("CREATE TABLE t (id integer PRIMARY KEY, v integer NOT NULL, "
                         "revision integer NOT NULL)")
            bare.execute("INSERT INTO t VALUES (1, 0, 0)")
            statement = BARE_UPDATE.format("?")

            def update(revision: int) -> int:
                return bare.execute(statement, (revision,)).rowcount

            journal = SqliteJournal(Path(scratch) / "journal.sqlite", environment_id=ENVIRONMENT)
            try:
                journal.migrate()
                rows = bracketed(update, seconds, None, lambda: [
                    measure_admissions(journal, seconds, None),
                    measure_transitions(journal, seconds, None)])
            finally:
                journal.close()
        finally:
            bare.close()
    header = [f"SQLite {sqlite3.sqlite_version}, bare: journal_mode={mode}, synchronous={level} "
              f"(2 = FULL), files in {tempfile.gettempdir()}"]
    return header, rows


# -- report ------------------------------------------------------------------------------------


def print_table(title: str, header: list[str], rows: list[Row]) -> None:
    bare = rows[-1].ops_per_s
    print(f"\n== {title}")
    for line in header:
        print(line)
    print(f"{'measurement':<38} {'ops':>7} {'s':>6} {'ops/s':>8} {'child rows/s':>12} "
          f"{'vs bare':>8} {'client CPU':>10} {'WAL B/op':>9}  note")
    for row in rows:
        child_rows = f"{row.child_rows / row.seconds:,.0f}" if row.child_rows else "-"
        ratio = row.ops_per_s / bare if bare else 0.0
        cpu = f"{row.cpu_seconds / row.seconds:.0%}" if row.seconds else "-"
        wal = f"{row.wal_bytes / row.ops:,.0f}" if row.wal_bytes is not None and row.ops else "-"
        print(f"{row.measurement:<38} {row.ops:>7,} {row.seconds:>6.2f} {row.ops_per_s:>8,.1f} "
              f"{child_rows:>12} {ratio:>7.3f}x {cpu:>10} {wal:>9}  {row.note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="timed seconds per measurement (default 10)")
    parser.add_argument("--dsn", help="an existing PostgreSQL server (default: a throwaway "
                        "cluster with fsync on)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"== journal benchmark: {args.seconds:g} s per measurement; one connection each; "
          "times count the port call only")
    header, rows = postgres_rows(args.dsn, args.seconds)
    print_table("PostgreSQL (same server, same run)", header, rows)
    header, rows = sqlite_rows(args.seconds)
    print_table("SQLite (same directory, same run)", header, rows)
    print(f"\ntotal wall time {time.perf_counter() - started:.1f} s; the machine is shared: "
          "compare the 'vs bare' ratios, not absolute figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
