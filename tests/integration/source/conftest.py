"""Fixtures of the source-freeze integration suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.contracts.ports import ImmutableArtifactPort
from support.source import artifact_store


@pytest.fixture
def store(tmp_path: Path) -> ImmutableArtifactPort:
    return artifact_store(tmp_path / "artifacts")
