"""The freeze benchmark runs end to end at two small sizes (figures are not asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BENCHMARK = ROOT / "benchmarks" / "freeze.py"


@pytest.mark.slow
def test_benchmark_runs_and_prints_its_tables() -> None:
    result = subprocess.run([sys.executable, str(BENCHMARK), "--rows", "20000", "--rows", "60000",
                             "--repeat", "1"],
                            capture_output=True, text=True, timeout=600, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    for header in ("== 20,000 rows", "== 60,000 rows", "rows/s", "vs bare", "peak MB",
                   "peak RSS of freeze, 60,000 / 20,000 rows"):
        assert header in result.stdout
    digests = re.findall(r"parent digest over 1 freeze run\(s\): (sha256:[0-9a-f]{64})$",
                         result.stdout, flags=re.MULTILINE)
    assert len(digests) == 2
