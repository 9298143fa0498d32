"""The journal benchmark runs end to end for one second per measurement (figures not asserted).

It starts its own throwaway PostgreSQL cluster with fsync on, unless
``$DPONE_TEST_POSTGRES_DSN`` names a server, which is then passed as ``--dsn``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "journal.py"
HEADERS = (
    "== PostgreSQL (same server, same run)", "== SQLite (same directory, same run)",
    "measurement", "ops/s", "child rows/s", "vs bare", "client CPU", "WAL B/op",
    "admit_parent, 100-child topology", "transition waiting_poll_running (CAS)",
    "bare CAS UPDATE, autocommit", "fsync=on", "synchronous_commit=on", "journal_mode=wal",
)


@pytest.mark.slow
def test_benchmark_runs_and_prints_its_tables() -> None:
    command = [sys.executable, str(BENCHMARK), "--seconds", "1"]
    configured = os.environ.get("DPONE_TEST_POSTGRES_DSN")
    if configured:
        command += ["--dsn", configured]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    for header in HEADERS:
        assert header in result.stdout, header
