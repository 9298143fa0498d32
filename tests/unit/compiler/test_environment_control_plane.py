"""The environment's control plane never holds a secret and never enters a plan: `dpone plan`
refuses a journal URL with a password, and moving the journal changes no plan digest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from support.common import EXAMPLES

ENVIRONMENT = Path("environments") / "local-dev.yaml"
WORKLOAD = Path("workloads") / "measurements_sync.yaml"


def _registry(tmp_path: Path, journal: str) -> Path:
    registry = tmp_path / "registry"
    shutil.copytree(EXAMPLES, registry)
    path = registry / ENVIRONMENT
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("journal: .dpone/journal.sqlite3", f"journal: {journal}"),
                    encoding="utf-8")
    return registry


def test_the_control_plane_is_not_part_of_the_plan(tmp_path: Path) -> None:
    example = compile_workload(EXAMPLES / WORKLOAD, EXAMPLES)
    moved = _registry(tmp_path, "postgresql://dpone@db.internal/journal")

    compiled = compile_workload(moved / WORKLOAD, moved)

    assert compiled.digest == example.digest
    assert b"control_plane" not in compiled.canonical


def test_a_journal_url_with_a_password_does_not_compile(tmp_path: Path) -> None:
    registry = _registry(tmp_path, "postgresql://dpone:hunter2@db.internal/journal")

    with pytest.raises(DponeError) as refused:
        compile_workload(registry / WORKLOAD, registry)

    assert refused.value.code == "environment.secret_in_url"
    assert refused.value.location is not None
    assert refused.value.location.path == "control_plane.journal"
    assert "hunter2" not in str(refused.value.document())
