"""The delivery benchmark runs end to end on a small dataset; figures are never asserted.

The PostgreSQL journal is reached through the latency proxy (``--journal-rtt-ms``). It runs
every path (dpone deliver, the naive client, the bare upload, the in-process run, and
for the synchronous scenario the in-process run through a transport that answers at once) for
both scenarios on both journals against the row-counting receiver. The script itself stops
non-zero when a run leaves the receiver with a row missing or applied twice; the test checks
the same from its JSON document, that every ratio and peak RSS is a number, and that the stage
report timed each stage and measured its limits and the stage floor.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "deliver.py"
ROWS = 12_000
PATHS = {"dpone", "telemetry", "naive", "bare", "checked", "in-process"}
UNWIRED = "no-wire"
"""The synchronous scenario's in-process run with no socket: it sends nothing to the receiver."""


def _positive(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


@pytest.mark.slow
def test_delivery_benchmark_runs_every_path_and_every_row_arrives_once(tmp_path: Path) -> None:
    output = tmp_path / "deliver.json"
    result = subprocess.run(
        [sys.executable, str(BENCHMARK), "--rows", str(ROWS), "--repeat", "1", "--journal",
         "both", "--peer", "naive", "--telemetry", "--journal-rtt-ms", "1", "--output",
         str(output)],
        capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for header in ("sync NDJSON", "async CSV+gzip", "SQLite journal", "PostgreSQL", "dpone/naive",
                   "dpone/bare", "telemetry on/off", "ms/child", "rows/s", "MB/s", "peak RSS MB",
                   "== cold start", "dpone delivery inspect --help", "stage floor",
                   "x the stage floor", "cores busy", "cores busy (this process's CPU over wall",
                   "drive over the checked upload", "drive with no wire",
                   "through a proxy holding each direction 0.5 ms: a round trip",
                   "deliver() with no wire"):
        assert header in result.stdout
    document = json.loads(output.read_text())
    assert {(r["scenario"], r["journal"]) for r in document["results"]} == {
        ("sync", "sqlite"), ("sync", "postgres"), ("async", "sqlite"), ("async", "postgres")}
    for entry in document["results"]:
        assert entry["sealed"]["rows"] == ROWS
        sync = entry["scenario"] == "sync"
        assert set(entry["runs"]) == PATHS | ({UNWIRED} if sync else set())
        for path, runs in entry["runs"].items():
            for run in runs:
                assert run["receiver"] == ({} if path == UNWIRED else {
                    "rows_total": ROWS, "duplicate_mutations": 0}), path
                assert run["rows"] == ROWS
        for path in ("dpone", "naive"):
            assert _positive(entry["median"][path]["peak_rss_mb"])
        for ratio in ("dpone/naive", "dpone/bare", "dpone/checked"):
            assert _positive(entry["ratios"][ratio]["median"])
        assert _positive(entry["telemetry_time_on_over_off"]["median"])
        assert _positive(entry["per_child_ms_in_process"]["journal"])
        stages = entry["stages"]  # the stage report: each stage timed, the limits measured
        assert set(stages["median_s"]) == {"freeze", "seal", "admit", "drive", "verify"}
        assert all(_positive(stages["median_s"][name]) for name in ("freeze", "seal", "drive"))
        assert all(_positive(stages["limits"][name])
                   for name in ("freeze_s", "seal_s", "seal_one_thread_s", "drive_s"))
        assert _positive(stages["stage_floor_s"]) and _positive(stages["dpone_over_floor"])
        assert _positive(stages["drive_over_checked_upload"])
        if sync:  # the drive's own work with nothing on the wire, next to the bare upload
            assert _positive(stages["drive_without_wire_s"])
            assert _positive(stages["drive_without_wire_over_bare"])
        else:
            assert "drive_without_wire_s" not in stages
        # The cores freeze and seal kept busy, theirs and their limits' (CPU over wall time).
        assert set(stages["cores_busy"]) == {"freeze", "seal"}
        assert all(_positive(stages["cores_busy"][name]) for name in ("freeze", "seal"))
        assert all(_positive(stages["limits"][f"{name}_cores_busy"]) for name in ("freeze", "seal"))
        cpu = entry["in_process_cpu"]  # where the CPU of deliver() and of the bare upload went
        watched = {"user", "sys", "receiver"} | (
            {"journal_server"} if entry["journal"] == "postgres" else set())
        assert cpu["cores"] >= 1
        for path in ("in_process", "bare", "checked", *(["no_wire"] if sync else [])):
            assert set(cpu[path]["median_s"]) == watched, path
            assert all(cpu[path]["median_s"][name] >= 0 for name in watched)
            assert _positive(cpu[path]["this_process_ms_per_child"])
            assert _positive(cpu[path]["cores_busy"])
            switches = cpu[path]["context_switches_per_child"]
            assert set(switches) == {"voluntary", "involuntary"}
            assert all(switches[kind] >= 0 for kind in switches)
        floor = cpu["cpu_floor"]  # all the watched CPU over the cores, against the bare upload
        assert floor["bare_s"] == pytest.approx(cpu["bare"]["wall_s"], abs=0.0006)
        for path in ("in_process", *(["no_wire"] if sync else [])):
            spent = sum(cpu[path]["median_s"].values()) / cpu["cores"]
            assert floor[path]["s"] == pytest.approx(spent, abs=0.002), path
            assert floor[path]["over_bare"] == pytest.approx(floor[path]["s"] / floor["bare_s"],
                                                             rel=0.02), path
        by_port = cpu["in_process"]["ms_per_child_by_port"]  # the calling threads' CPU per port
        assert set(by_port) == {"journal", "artifacts", "transport", "rest"}
        assert all(_positive(by_port[name]) for name in ("journal", "artifacts", "transport"))
        if entry["journal"] == "sqlite":  # its one connection: the journal's serial part
            assert _positive(cpu["in_process"]["journal_connection_lent_s"])
    assert len(document["cold_start"]["importtime_top"]) == 10
    walls = document["cold_start"]["wall_s"]
    assert set(walls) == {f"{command}{variant}" for command in ("dpone --help",
                                                             "dpone delivery inspect --help")
                          for variant in ("", " (collector as usual)")}
    assert all(_positive(wall["median"]) for wall in walls.values())
