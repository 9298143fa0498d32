"""Paths shared by the test suites (importable because pyproject puts tests/ on sys.path)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
