"""Freezing a CSV source into the sorted parent, next to a bare pyarrow read + sort + write.

Run: ``.venv/bin/python benchmarks/freeze.py [--rows N ...] [--repeat K] [--seed S] [--dpone DIR]``
(default ``--rows 2000000``; give ``--rows`` twice, e.g. ``--rows 2000000 --rows 20000000``, to
compare the peak memory of two sizes; about 20 s per million rows on 2 cores, most of it
writing the synthetic CSV).

For each size it writes N seeded synthetic rows in the example's schema, CSV dialect and daily
shape over August 2026 (``benchmarks/deliver.py``'s shape: the three busiest days hold 7.7 % of
the rows each) into a scratch copy of ``examples/``, compiles ``measurements_sync`` and then, in
alternating fresh subprocesses (K of each, the median printed):

* ``freeze``: ``dpone.executor.source.freeze_source`` of August 2026 into a local artifact store
  (read, bound, spool, sort, write the parent IPC file, verify, hash, publish);
* ``bare``: the machine's limit for the same work without bounded memory: ``pyarrow.csv.read_csv``
  of the whole file with the same column types, ``Table.sort_by`` on the parent's order, one IPC
  file written (no verification, no hashing, no publication).

Columns: ``s`` (wall seconds of the stage alone, imports and compilation excluded), ``rows/s``,
``vs bare`` (bare seconds / these seconds), ``base MB`` (the subprocess's resident memory before
the stage: interpreter, pyarrow, dpone), ``peak MB`` (``VmHWM``, the process's peak resident
memory, anonymous and file-backed), ``growth MB`` (peak - base). With two sizes the last line
compares the peaks. The parent digest of each freeze run is printed: it must be the same in
every repeat. The machine is shared and noisy: compare the ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _allocator  # noqa: F401  (first: before pyarrow loads)
import _deliver_data as deliver_data
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
FIRST_DAY = dt.date(2026, 8, 1)
DAYS = 31
SITES = ["Москва-Север", "Санкт-Петербург", "Новосибирск", "Kazan", "Екатеринбург", "Sochi"]
NOTES = ["калибровка", "ok", "проверено вручную", "sensor reset", "замена батареи", ""]
SEED = 20260801
MB = 1_000_000
BLOCK_ROWS = 1_000_000

CHILD = r"""
import datetime as dt, json, os, sys, time
from pathlib import Path

def status(field):
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0

mode, registry, scratch = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
import pyarrow as pa, pyarrow.compute as pc, pyarrow.csv as pa_csv
from pyarrow import ipc
from dpone.artifacts import LocalArtifactStore
from dpone.compiler import compile_workload
from dpone.executor.source import freeze_source
from dpone.executor.source._reading import CSV_PARSE_OPTIONS, csv_convert_options, source_types
compiled = compile_workload(registry / "workloads" / "measurements_sync.yaml", registry)
plan = compiled.plan
base = status("VmRSS")
with open("/proc/self/clear_refs", "w") as handle:  # resets VmHWM to the current RSS
    handle.write("5")
start = time.perf_counter()
digest = None
if mode == "freeze":
    store = LocalArtifactStore(scratch / "store")
    parent = freeze_source(plan, registry_root=registry, interval_start=dt.date(2026, 8, 1),
                           interval_end=dt.date(2026, 9, 1), artifacts=store,
                           scratch_dir=scratch)
    rows, digest = parent.row_count, parent.artifact.digest
else:
    types = source_types(plan.mapping)
    table = pa_csv.read_csv(registry / "data" / "measurements.csv",
                            parse_options=CSV_PARSE_OPTIONS,
                            convert_options=csv_convert_options(types, list(types)))
    keys = [plan.source_boundary.scope_field,
            *[k for k in plan.mapping.sort_keys if k != plan.source_boundary.scope_field]]
    order = keys + [c.name for c in plan.mapping.columns if c.name not in keys]
    table = table.sort_by([(name, "ascending") for name in order])
    with pa.OSFile(str(scratch / "bare.arrow"), "wb") as sink, \
            ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=65536)
    rows = table.num_rows
seconds = time.perf_counter() - start
print(json.dumps({"rows": rows, "s": seconds, "base": base, "peak": status("VmHWM"),
                  "digest": digest}))
"""


def day_counts(rows: int) -> list[int]:
    """``benchmarks/deliver.py``'s daily shape (weekday 110, weekend 40, days 14-16 240, 23 3)
    over :data:`DAYS` days."""
    return deliver_data.day_counts(rows, DAYS)


def _block(rng_seed: int, day: dt.date, first: int, count: int, day_rows: int) -> pa.Table:
    """``count`` rows of ``day`` (rows ``first..`` of its ``day_rows``), vectorised."""
    import random  # noqa: PLC0415

    rng = random.Random(rng_seed)

    def uniform(n: int) -> pa.Array:
        raw = pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(rng.randbytes(4 * n))])
        return pc.divide(raw.cast(pa.float64()), float(1 << 32))

    def pick(values: list[str], n: int) -> pa.Array:
        index = pc.floor(pc.multiply(uniform(n), float(len(values)))).cast(pa.int32())
        return pa.array(values, pa.string()).take(index)

    def nulls(values: pa.Array, share: float) -> pa.Array:
        return pc.if_else(pc.less(uniform(len(values)), share), pa.scalar(None, values.type),
                          values)

    midnight = int(dt.datetime.combine(day, dt.time(), dt.UTC).timestamp() * 1000)
    index = pa.array(range(first, first + count), pa.int64())
    spread = pc.floor(pc.multiply(uniform(count), 60_000.0)).cast(pa.int64())
    millis = pc.min_element_wise(
        pc.add(pc.divide(pc.multiply(index, 86_400_000), max(day_rows, 1)), spread), 86_399_999)
    stamps = pc.add(millis, midnight).cast(pa.timestamp("ms", tz="UTC"))
    return pa.table({
        "business_date": pa.array([day] * count, pa.date32()),
        "sensor_id": pick([f"S-{i:03d}" for i in range(1, 60)], count),
        "site": nulls(pick(SITES, count), 0.05),
        "reading": nulls(pc.round(pc.subtract(pc.multiply(uniform(count), 100.0), 40.0), 3),
                         0.04),
        "sample_count": pc.floor(pc.multiply(uniform(count), 5000.0)).cast(pa.int64()),
        "note": nulls(pick(NOTES, count), 0.3),
        "measured_at": stamps,
        "is_valid": pc.greater(uniform(count), 0.1),
    })


def synthetic_csv(path: Path, rows: int, seed: int) -> None:
    """N rows in the example's dialect: quoted strings, empty unquoted null, ``Z`` instants."""
    options = pa_csv.WriteOptions(include_header=True, quoting_style="needed")
    with pa_csv.CSVWriter(str(path), _block(seed, FIRST_DAY, 0, 0, 1).schema,
                          write_options=options) as writer:
        for offset, count in enumerate(day_counts(rows)):
            day = FIRST_DAY + dt.timedelta(days=offset)
            for first in range(0, count, BLOCK_ROWS):
                writer.write_table(_block(seed * 1000 + offset * 100 + first // BLOCK_ROWS,
                                          day, first, min(BLOCK_ROWS, count - first), count))


def run_child(mode: str, registry: Path, scratch: Path, dpone_root: Path
              ) -> dict[str, float | int | str | None]:
    out = scratch / mode
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(dpone_root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(registry), str(out)], env=env,
                          capture_output=True, text=True, check=False, cwd=dpone_root)
    if done.returncode:
        raise RuntimeError(f"{mode} failed:\n{done.stderr}")
    result: dict[str, float | int | str | None] = json.loads(done.stdout.splitlines()[-1])
    shutil.rmtree(out, ignore_errors=True)
    return result


def _median(runs: list[dict[str, float | int | str | None]], key: str) -> float:
    return float(statistics.median(float(run[key] or 0) for run in runs))


def measure(rows: int, repeat: int, seed: int, scratch: Path, dpone_root: Path
            ) -> dict[str, float]:
    registry = scratch / f"registry-{rows}"
    shutil.copytree(EXAMPLES, registry, ignore=shutil.ignore_patterns("data"))
    (registry / "data").mkdir()
    csv_path = registry / "data" / "measurements.csv"
    start = time.perf_counter()
    synthetic_csv(csv_path, rows, seed)
    print(f"\n== {rows:,} rows: synthetic CSV {csv_path.stat().st_size / MB:,.0f} MB written in "
          f"{time.perf_counter() - start:.1f} s")
    runs: dict[str, list[dict[str, float | int | str | None]]] = {"freeze": [], "bare": []}
    for _ in range(repeat):
        for mode in ("bare", "freeze"):
            runs[mode].append(run_child(mode, registry, scratch, dpone_root))
    digests = sorted({str(run["digest"]) for run in runs["freeze"]})
    bare_s = _median(runs["bare"], "s")
    print(f"{'stage':<8} {'rows':>12} {'s':>7} {'rows/s':>11} {'vs bare':>8} {'base MB':>8} "
          f"{'peak MB':>8} {'growth MB':>9}")
    for mode in ("freeze", "bare"):
        seconds, base, peak = (_median(runs[mode], key) for key in ("s", "base", "peak"))
        print(f"{mode:<8} {rows:>12,} {seconds:>7.2f} {rows / seconds:>11,.0f} "
              f"{bare_s / seconds:>7.2f}x {base / MB:>8.1f} {peak / MB:>8.1f} "
              f"{(peak - base) / MB:>9.1f}")
    print(f"parent digest over {repeat} freeze run(s): {', '.join(digests)}")
    shutil.rmtree(registry, ignore_errors=True)
    return {"peak": _median(runs["freeze"], "peak"), "bare_peak": _median(runs["bare"], "peak"),
            "growth": _median(runs["freeze"], "peak") - _median(runs["freeze"], "base")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append",
                        help="synthetic rows (repeat the option to compare sizes)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--dpone", type=Path, default=ROOT,
                        help="the checkout whose dpone the freeze runs (default: this one), "
                             "e.g. another worktree to compare before and after")
    args = parser.parse_args()
    sizes: list[int] = args.rows or [2_000_000]
    print(f"== freeze benchmark: sizes {', '.join(f'{n:,}' for n in sizes)}; "
          f"{args.repeat} alternating bare/freeze subprocess pair(s) per size, medians; "
          f"dpone from {args.dpone}")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpone-bench-freeze-") as scratch:
        results = [measure(rows, args.repeat, args.seed, Path(scratch), args.dpone.resolve())
                   for rows in sizes]
    if len(sizes) > 1:
        first, last = results[0], results[-1]
        print(f"\npeak RSS of freeze, {sizes[-1]:,} / {sizes[0]:,} rows: "
              f"{last['peak'] / first['peak']:.2f}x ({first['peak'] / MB:.0f} -> "
              f"{last['peak'] / MB:.0f} MB; growth over the base {first['growth'] / MB:.0f} -> "
              f"{last['growth'] / MB:.0f} MB); bare: {last['bare_peak'] / first['bare_peak']:.2f}x")
    print(f"\ntotal wall time {time.perf_counter() - started:.1f} s; the machine is shared: "
          "compare the ratios, not absolute figures")


if __name__ == "__main__":
    main()
