"""Paths and helpers shared by the test suites (importable because pyproject puts tests/ on
sys.path)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from click.testing import Result

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
GOLDEN_PLANS = ROOT / "goldens" / "plans"


def free_port() -> int:
    """A loopback TCP port nothing listens on at the time of the call."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_dpone(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``dpone ARGS`` as a real process, importing this checkout's ``dpone``."""
    return subprocess.run([sys.executable, "-c", "from dpone.cli.main import main; main()", *args],
                          capture_output=True, text=True, timeout=60, check=False, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def assert_no_traceback(result: Result) -> None:
    """An in-process CLI run printed no traceback and raised nothing but its exit."""
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
