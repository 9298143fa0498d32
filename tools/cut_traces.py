"""Record the cut trace of every delivery scenario, and compare two records byte for byte.

A cut trace is what ``dpone deliver`` prints under ``DPONE_TEST_CUT=trace``: every journal write,
artifact write and send boundary the run passes, in order (:mod:`dpone.executor.cuts`). A change
that claims to leave the executor's behaviour unchanged must leave every trace unchanged. This
script runs each scenario of the fault matrix's traced runs (both protocol families, one and two
children, every receiver fault, an expired receipt) against a fresh mock receiver and journal,
and writes one JSON document: scenario -> passages.

    .venv/bin/python tools/cut_traces.py record --output before.json   # on the old tree
    .venv/bin/python tools/cut_traces.py record --output after.json    # on the new tree
    .venv/bin/python tools/cut_traces.py compare before.json after.json

Lease renewals are left out (the heartbeat renews on its own clock), and an asynchronous job's
consecutive ``running`` observations are counted once: how many polls a running job takes
depends on the machine's speed, not on the code. ``--dialect postgres --dsn URL`` records the
same scenarios against a PostgreSQL journal (a schema per scenario; without ``--dsn`` on a
throwaway cluster of its own).
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support.fault_matrix import (  # noqa: E402
    ONE_CHILD,
    TWO_CHILDREN,
    Cell,
    CellSpec,
    fault_rules,
    new_receiver,
    trace,
)
from support.postgres_cluster import ThrowawayCluster  # noqa: E402

FAULTS = ("none", "commit_then_reset", "throttle_429", "server_error_5xx")
FAMILIES = ("sync_batch", "async_bulk_job")


def scenarios() -> Iterator[tuple[str, str, tuple[str, str]]]:
    """(family, fault, interval) of every traced scenario."""
    for family in FAMILIES:
        for interval in (ONE_CHILD, TWO_CHILDREN):
            for fault in FAULTS:
                yield family, fault, interval
    yield "async_bulk_job", "receipt_expired", ONE_CHILD


def _journal_url(dialect: str, dsn: str | None, root: Path) -> str:
    if dialect == "sqlite":
        return str(root / "journal" / "journal.sqlite3")
    assert dsn is not None, "--dsn is required with --dialect postgres"
    schema = "trace_" + secrets.token_hex(6)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    separator = "&" if "?" in dsn else "?"
    return f"{dsn}{separator}options={quote(f'-c search_path={schema},public')}"


def normalized(passages: Sequence[str]) -> list[str]:
    """``passages`` with identical consecutive poll cycles (from one poll's rate turn to the
    next) kept once, and the occurrence counters renumbered after the fold."""
    points = [passage.split("@", 1)[0] for passage in passages]
    cycles: list[list[str]] = [[]]
    for point in points:
        if point == "before:rate_turn" and cycles[-1]:
            cycles.append([])
        cycles[-1].append(point)
    folded: list[str] = []
    for index, cycle in enumerate(cycles):
        if index == 0 or cycle != cycles[index - 1]:
            folded += cycle
    counts: dict[str, int] = {}
    renumbered = []
    for point in folded:
        counts[point] = counts.get(point, 0) + 1
        renumbered.append(f"{point}@{counts[point]}")
    return renumbered


def record(dialect: str, dsn: str | None) -> dict[str, list[str]]:
    traces: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="dpone-traces-") as scratch:
        for index, (family, fault, interval) in enumerate(scenarios()):
            name = CellSpec(dialect, family, "trace", fault, interval).cell_id
            root = Path(scratch) / f"scenario-{index}"
            root.mkdir()
            with _receiver() as receiver:
                cell = Cell(CellSpec(dialect, family, "trace", fault, interval), root,
                            _journal_url(dialect, dsn, root), receiver)
                for rule in fault_rules(family, fault):
                    receiver.state.faults.install([rule])
                traces[name] = normalized(trace(cell))
            print(f"{name}: {len(traces[name])} passages", file=sys.stderr)
    return traces


@contextmanager
def _receiver() -> Iterator[object]:
    receiver = new_receiver()
    try:
        yield receiver
    finally:
        receiver.__exit__(None, None, None)


def compare(before: Path, after: Path) -> int:
    old = json.loads(before.read_text(encoding="utf-8"))
    new = json.loads(after.read_text(encoding="utf-8"))
    differing = sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
    for name in differing:
        print(f"differs: {name}")
        left, right = old.get(name) or [], new.get(name) or []
        for index, (a, b) in enumerate(zip(left, right, strict=False)):
            if a != b:
                print(f"  first difference at passage {index}: {a} -> {b}")
                break
        else:
            print(f"  lengths {len(left)} -> {len(right)}")
    same = len(old.keys() | new.keys()) - len(differing)
    print(f"{same} scenario(s) byte-identical, {len(differing)} differ")
    return 1 if differing else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record", help="trace every scenario into one JSON file")
    recording.add_argument("--output", type=Path, required=True)
    recording.add_argument("--dialect", choices=("sqlite", "postgres"), default="sqlite")
    recording.add_argument("--dsn", help="an admin DSN of a PostgreSQL cluster (postgres; "
                           "default: a throwaway cluster of the machine's server binaries)")
    comparing = commands.add_parser("compare", help="compare two recorded trace files")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "compare":
        return compare(args.before, args.after)
    if args.dialect == "postgres" and args.dsn is None:
        with ThrowawayCluster() as cluster:  # a cluster of its own, gone afterwards
            traces = record(args.dialect, cluster.dsn)
    else:
        traces = record(args.dialect, args.dsn)
    args.output.write_text(json.dumps(traces, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(traces)} scenario(s) -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
