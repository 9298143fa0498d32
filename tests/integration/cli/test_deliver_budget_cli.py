"""`dpone deliver` over a boundary beyond the child budget: refused before sealing or admission."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import Dpone


@pytest.mark.parametrize("workload", ["measurements_async", "measurements_sync"])
def test_a_boundary_over_the_child_budget_exits_2_before_sealing_or_admission(
        registry: Path, tmp_path: Path, receiver: ReceiverThread, workload: str) -> None:
    dpone = Dpone(registry, tmp_path / "state")

    run = dpone.deliver(workload, ("0001-01-01", "9999-12-31"), "--format", "json")

    assert run.code == 2, run.err
    error = run.json()  # exactly one JSON document on stdout
    assert error["schema"] == "dpone.error.v1"
    assert error["code"] == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT"
    assert error["details"]["max_children"] == 10000
    assert error["details"]["children"] > 10000 and error["details"]["children_exact"] is False
    assert "limits.max_children" in error["hint"]
    assert not (tmp_path / "state" / "artifacts" / "payloads").exists()
    assert not Path(dpone.journal_url).exists()
    assert receiver.state.ledger.snapshot()["requests"] == {}
    assert "sealed child" not in run.err
