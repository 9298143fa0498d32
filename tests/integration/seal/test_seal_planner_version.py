"""A plan pins its planner: a new boundary is planned only by the version the plan names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.plan import PLANNER_ALGORITHM_VERSION, RestDeliveryPlan
from dpone.executor.seal import seal_all
from dpone.executor.source import freeze_source
from support.common import EXAMPLES
from support.seal import INTERVAL


def test_a_plan_pinned_to_the_previous_planner_seals_nothing(tmp_path: Path) -> None:
    compiled = compile_workload(EXAMPLES / "workloads" / "measurements_async.yaml", EXAMPLES)
    assert compiled.plan.planner_algorithm_version == PLANNER_ALGORITHM_VERSION
    document = json.loads(compiled.canonical)
    document["planner_algorithm_version"] = "dpone.adaptive_window_planner.v1"
    old = RestDeliveryPlan.model_validate_json(json.dumps(document))  # v1 plans stay readable
    store = LocalArtifactStore(tmp_path)
    parent = freeze_source(old, registry_root=EXAMPLES, interval_start=INTERVAL[0],
                           interval_end=INTERVAL[1], artifacts=store)

    with pytest.raises(DponeError) as caught:
        seal_all(old, compiled.digest, parent, store.root / parent.artifact.key, store)

    assert caught.value.code == "contract.semantic_invalid"
    assert "dpone.adaptive_window_planner.v1" in caught.value.message
    assert "Recompile the workload" in caught.value.fix_hint
    assert not (tmp_path / "payloads").exists()
