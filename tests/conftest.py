"""Shared fixtures: the repository root and a writable copy of the example registry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.common import EXAMPLES


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """A private copy of examples/ that a test may edit."""
    target = tmp_path / "registry"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target
