"""Compiled plans of the examples are reviewed goldens under goldens/plans/."""

from __future__ import annotations

import json
from typing import Any

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from dpone.compiler import compile_workload
from dpone.contracts import canonical_json, content_digest
from support.common import EXAMPLES, ROOT


class PlanGolden(SingleFileSnapshotExtension):
    """One pretty-printed JSON file per plan, kept under goldens/plans for review."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(ROOT / "goldens" / "plans")

    @classmethod
    def get_snapshot_name(cls, *, test_location: Any, index: Any = 0) -> str:
        # goldens/plans/<workload>.json: named for the example, not for the test function.
        return str(test_location.testname).split("[", 1)[1].rstrip("]")


@pytest.fixture
def golden(snapshot: Any) -> Any:
    return snapshot.use_extension(PlanGolden)


@pytest.mark.parametrize("name", ["measurements_async", "measurements_sync"])
def test_plan_matches_golden(name: str, golden: Any) -> None:
    compiled = compile_workload(EXAMPLES / "workloads" / f"{name}.yaml", EXAMPLES)
    pretty = json.dumps(json.loads(compiled.canonical), indent=2, sort_keys=True,
                        ensure_ascii=False) + "\n"
    assert pretty == golden


@pytest.mark.parametrize("name", ["measurements_async", "measurements_sync"])
def test_golden_digest_equals_compiled_digest(name: str) -> None:
    stored = json.loads((ROOT / "goldens" / "plans" / f"{name}.json").read_text("utf-8"))
    compiled = compile_workload(EXAMPLES / "workloads" / f"{name}.yaml", EXAMPLES)
    assert content_digest(canonical_json(stored)) == compiled.digest
