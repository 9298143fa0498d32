"""The per-child overhead benchmark runs end to end on both journals at a tiny size (figures
not asserted; ``tests/integration/delivery/test_delivery_child_cost.py`` holds the counts).

It starts its own throwaway PostgreSQL cluster with fsync on, unless
``$DPONE_TEST_POSTGRES_DSN`` names a server, which is then passed as ``--dsn``. The script runs
this checkout's ``dpone`` (the repository root leads ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BENCHMARK = ROOT / "benchmarks" / "child_overhead.py"
LINES = (
    "== per-child journal and artifact cost:", "== sqlite: WAL, synchronous=FULL",
    "== postgres: synchronous_commit on", "journal ", "artifacts ", "transactions (= commits)",
    "statements", "artifact writes 2.00/child", "os.fsync", "calls: ",
)


@pytest.mark.slow
def test_benchmark_runs_and_prints_its_report() -> None:
    command = [sys.executable, str(BENCHMARK), "--rows-per-child", "800", "--repeat", "1"]
    configured = os.environ.get("DPONE_TEST_POSTGRES_DSN")
    if configured:
        command += ["--dsn", configured]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False,
                            env=env)
    assert result.returncode == 0, result.stderr
    for line in LINES:
        assert line in result.stdout, line
