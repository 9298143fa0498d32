"""The delivery benchmark's stage report: each stage of a delivery next to a same-run limit.

A delivery in this process is timed stage by stage, each repeat from the CSV file: ``freeze``
(the boundary read, sorted and written as the parent: ``seal_boundary`` until its ``on_frozen``),
``seal`` (planning, encoding and publishing every payload), ``admit`` (the topology's one
admission transaction: ``journal.admit_parent``), ``drive`` (every child sent and settled: the
rest of ``deliver()``) and ``verify`` (promoting the verified frontier:
``journal.promote_frontier``; a synchronous answer's verification is taken with its settle, so
it is in ``drive``).

The limits are measured in the same run, on the same machine, with no dpone code on their path:

* freeze: ``pyarrow.csv.read_csv`` of the whole file with the parent's column types (pyarrow's
  reader uses every core), ``Table.sort_by`` on the parent's order, one Arrow IPC file written;
  nothing bounded, verified, hashed or published;
* seal: the sorted table cut into the sealed children's row counts, each child's body made by
  bare Arrow kernels (NDJSON; CSV + gzip at the profile's level for the jobs), hashed with
  SHA-256 and written to a file, one fsync per worker at its end; the children split over
  ``workers`` threads (each stage releases the GIL) and, for comparison, on one;
* drive: the bare upload of the same sealed bodies (the benchmark's ``bare`` path);
* admit and verify have no limit: they are one transaction each.

The stage floor is freeze + seal (``workers`` threads) + drive limits: what a delivery that
keeps the seal-all barrier could take on this machine if each stage ran at its limit.
"""

from __future__ import annotations

import hashlib
import io
import os
import statistics
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv
from _seal_json import bare_arrow
from pyarrow import ipc

from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.source._reading import CSV_PARSE_OPTIONS, csv_convert_options, source_types

STAGES = ("freeze", "seal", "admit", "drive", "verify")
LIMIT_NOTES = {
    "freeze": "pyarrow read_csv + sort_by + IPC write, whole file in memory",
    "seal": "bare Arrow kernels encode + SHA-256 + write per child, {workers} threads",
    "drive": "bare upload of the same sealed bodies (path bare)",
}


@dataclass(frozen=True)
class Timed:
    """A span's wall seconds and the CPU seconds this process (every thread) spent in it."""

    seconds: float
    cpu_s: float

    @staticmethod
    def now() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    @staticmethod
    def between(start: tuple[float, float], end: tuple[float, float]) -> Timed:
        return Timed(end[0] - start[0], end[1] - start[1])

    @property
    def cores_busy(self) -> float:
        return self.cpu_s / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Limits:
    """One scenario's same-run limits (the fastest of ``repeat`` runs of each), with the cores
    the fastest run kept busy (this process's CPU over its wall time)."""

    freeze_s: float
    seal_s: float
    seal_one_thread_s: float
    workers: int
    freeze_cores: float
    seal_cores: float

    def to_json(self) -> dict[str, Any]:
        return {"freeze_s": round(self.freeze_s, 3), "seal_s": round(self.seal_s, 3),
                "seal_one_thread_s": round(self.seal_one_thread_s, 3), "workers": self.workers,
                "freeze_cores_busy": round(self.freeze_cores, 2),
                "seal_cores_busy": round(self.seal_cores, 2)}


def _fastest(action: Callable[[], Any], repeat: int) -> tuple[Any, Timed]:
    best, result = Timed(float("inf"), 0.0), None
    for _ in range(repeat):
        start = Timed.now()
        result = action()
        timed = Timed.between(start, Timed.now())
        if timed.seconds < best.seconds:
            best = timed
    return result, best


def _sorted_table(plan: RestDeliveryPlan, csv_file: Path, out: Path) -> pa.Table:
    types = source_types(plan.mapping)
    table = pa_csv.read_csv(csv_file, parse_options=CSV_PARSE_OPTIONS,
                            convert_options=csv_convert_options(types, list(types)))
    keys = [plan.source_boundary.scope_field,
            *[k for k in plan.mapping.sort_keys if k != plan.source_boundary.scope_field]]
    order = keys + [c.name for c in plan.mapping.columns if c.name not in keys]
    table = table.sort_by([(name, "ascending") for name in order])
    with pa.OSFile(str(out), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=65536)
    return table


def _body(table: pa.Table, kind: str, level: int) -> bytes:
    if kind == "ndjson":
        return bare_arrow(table, "ndjson")
    text = io.BytesIO()
    pa_csv.write_csv(table, text)
    compressor = zlib.compressobj(level, zlib.DEFLATED, 31)
    return compressor.compress(text.getvalue()) + compressor.flush()


def _seal_all(table: pa.Table, counts: list[int], kind: str, level: int, out: Path,
              workers: int) -> int:
    """Every child's body made, hashed and written, the children dealt over ``workers``
    threads in contiguous runs; returns the bytes written."""
    starts = [sum(counts[:i]) for i in range(len(counts))]
    share = -(-len(counts) // workers)
    written = [0] * workers

    def work(index: int) -> None:
        path = out / f"worker-{index}.bin"
        with path.open("wb") as sink:
            for child in range(index * share, min((index + 1) * share, len(counts))):
                body = _body(table.slice(starts[child], counts[child]), kind, level)
                hashlib.sha256(body).hexdigest()
                sink.write(body)
                written[index] += len(body)
            sink.flush()
            os.fsync(sink.fileno())
        path.unlink()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(written)


def measure_limits(plan: RestDeliveryPlan, topology: SealedTopology, csv_file: Path,
                   scratch: Path, kind: str, *, repeat: int = 3) -> Limits:
    """The scenario's freeze and seal limits on this machine, now (``kind``: ``ndjson`` or
    ``csv_gzip``, the scenario's payload)."""
    scratch.mkdir(parents=True, exist_ok=True)
    table, freeze = _fastest(lambda: _sorted_table(plan, csv_file, scratch / "bare.arrow"),
                             repeat)
    (scratch / "bare.arrow").unlink()
    level = plan.profile.snapshot.codec.gzip.level
    counts = [child.descriptor.row_count for child in topology.children]
    if sum(counts) != table.num_rows:
        raise RuntimeError(f"the bare freeze read {table.num_rows} rows, the topology holds "
                           f"{sum(counts)}")
    workers = os.cpu_count() or 1
    _, seal = _fastest(lambda: _seal_all(table, counts, kind, level, scratch, workers), repeat)
    _, one = _fastest(lambda: _seal_all(table, counts, kind, level, scratch, 1), repeat)
    return Limits(freeze.seconds, seal.seconds, one.seconds, workers, freeze.cores_busy,
                  seal.cores_busy)


def stage_times(spent: dict[str, float], seconds: float) -> dict[str, float]:
    """One in-process repeat's stages from its timed port calls (``stage.freeze`` and
    ``stage.seal`` recorded by the run itself)."""
    admit = spent.get("journal.admit_parent", 0.0)
    verify = spent.get("journal.promote_frontier", 0.0)
    return {"freeze": spent.get("stage.freeze", 0.0), "seal": spent.get("stage.seal", 0.0),
            "admit": admit, "drive": seconds - admit - verify, "verify": verify}


def stage_cores(spent: dict[str, float]) -> dict[str, float]:
    """One in-process repeat's cores busy in freeze and in seal: this process's CPU (every
    thread) over the stage's wall time (``stage_cpu.*`` recorded by the run itself)."""
    return {name: spent[f"stage_cpu.{name}"] / spent[f"stage.{name}"]
            for name in ("freeze", "seal") if spent.get(f"stage.{name}")}


def _cores_line(cores: list[dict[str, float]], limits: Limits) -> tuple[str, dict[str, Any]]:
    busy = {name: statistics.median(c[name] for c in cores) for name in ("freeze", "seal")}
    line = (f"cores busy (this process's CPU over wall, median; {limits.workers} cores): "
            f"freeze {busy['freeze']:.2f} (its limit {limits.freeze_cores:.2f}), "
            f"seal {busy['seal']:.2f} (its limit {limits.seal_cores:.2f})")
    return line, {name: round(value, 2) for name, value in busy.items()}


def render(repeats: list[dict[str, float]], limits: Limits, bare_s: float | None,
           cold_s: float | None, checked_s: float | None = None,
           cores: list[dict[str, float]] | None = None,
           unwired_s: float | None = None) -> tuple[list[str], dict[str, Any]]:
    """The stage table (medians of the repeats) and its JSON; with ``cores`` (each repeat's
    :func:`stage_cores`), the cores freeze and seal kept busy next to their limits'; with
    ``unwired_s`` (the median drive of the ``no-wire`` path), the drive's own work next to the
    bare upload."""
    median = {name: statistics.median(r[name] for r in repeats) for name in STAGES}
    limit = {"freeze": limits.freeze_s, "seal": limits.seal_s, "drive": bare_s}
    lines = [f"stages, in process from the CSV file (median of {len(repeats)}), each against "
             "its same-run limit",
             f"{'stage':<7} {'s':>7} {'limit s':>8} {'x limit':>8}  limit"]
    for name in STAGES:
        bound = limit.get(name)
        over = f"{median[name] / bound:.2f}x" if bound else "-"
        note = LIMIT_NOTES.get(name, "one journal transaction: no limit measured")
        lines.append(f"{name:<7} {median[name]:>7.2f} "
                     f"{'-' if bound is None else f'{bound:.2f}':>8} {over:>8}  "
                     f"{note.format(workers=limits.workers)}")
    floor = limits.freeze_s + limits.seal_s + bare_s if bare_s is not None else None
    staged = sum(median.values())
    document: dict[str, Any] = {"median_s": {k: round(v, 3) for k, v in median.items()},
                                "limits": {**limits.to_json(), "drive_s": bare_s},
                                "stage_floor_s": None if floor is None else round(floor, 3),
                                "in_process_total_s": round(staged, 3)}
    if checked_s is not None:
        document["drive_over_checked_upload"] = round(median["drive"] / checked_s, 3)
        lines.append(f"drive over the checked upload (each payload read and its SHA-256 checked "
                     f"before its POST, {checked_s:.2f} s): {median['drive'] / checked_s:.2f}x")
    if unwired_s is not None:
        document["drive_without_wire_s"] = round(unwired_s, 3)
        share = f" = {unwired_s / bare_s:.2f}x the bare upload" if bare_s else ""
        lines.append(f"drive with no wire (a transport answering at once, no socket: journal, "
                     f"marker, evidence, payload check): {unwired_s:.2f} s{share}, "
                     f"{unwired_s / median['drive']:.0%} of the drive")
        if bare_s:
            document["drive_without_wire_over_bare"] = round(unwired_s / bare_s, 3)
    if cores:
        line, document["cores_busy"] = _cores_line(cores, limits)
        lines.append(line)
    lines.append(f"seal limit on one thread: {limits.seal_one_thread_s:.2f} s "
                 f"({limits.seal_one_thread_s / limits.seal_s:.2f}x the {limits.workers}-thread "
                 "limit)")
    if floor is not None:
        lines.append(f"stage floor (freeze + seal + drive limits): {floor:.2f} s; the stages in "
                     f"process: {staged:.2f} s = {staged / floor:.2f}x the floor")
        if cold_s is not None:
            document["dpone_over_floor"] = round(cold_s / floor, 3)
            lines.append(f"dpone deliver, cold process (median): {cold_s:.2f} s = "
                         f"{cold_s / floor:.2f}x the stage floor (the rest over the in-process "
                         f"stages, {cold_s - staged:.2f} s: interpreter, imports, compile, plan "
                         "load, exit)")
    return lines, document
