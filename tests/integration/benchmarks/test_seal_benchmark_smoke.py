"""The seal benchmark runs end to end on a small dataset (figures are not asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "seal.py"


@pytest.mark.slow
def test_benchmark_runs_and_prints_its_tables() -> None:
    result = subprocess.run([sys.executable, str(BENCHMARK), "--rows", "20000", "--quick",
                             "--repeat", "1"],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    for header in ("== throughput", "== same-run limits", "== ratios",
                   "== planner requests", "== peak RSS", "rows/s", "MB/s",
                   "seal CSV+gzip vs serial limit", "limit violations", "peak anon MB",
                   "== same-run limits of the JSON formats", "seal ndjson vs serial limit",
                   "seal json_array vs serial limit", "sealer encode path ndjson vs"):
        assert header in result.stdout
