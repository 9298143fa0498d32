"""The delivery benchmark runs end to end on a small dataset (figures are not asserted).

The script itself checks that every sealed row reached the receiver's ledger exactly once for
each family and exits non-zero otherwise.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "deliver.py"


@pytest.mark.slow
def test_delivery_benchmark_runs_and_prints_its_tables() -> None:
    result = subprocess.run([sys.executable, str(BENCHMARK), "--rows", "20000", "--repeat", "1"],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    for header in ("== throughput", "== where deliver's time goes", "== bounds", "vs bare",
                   "rows/s", "MB/s", "sync", "async shipped", "async engine"):
        assert header in result.stdout
