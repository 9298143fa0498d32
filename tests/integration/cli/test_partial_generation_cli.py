"""A partially applied replacement blocks a higher overlapping generation until an operator
reconciles it; once what it applied is confirmed from the receiver, the next generation
replaces the window, every row applied once under the new keys."""

from __future__ import annotations

from pathlib import Path

from dpone.receiver import ReceiverThread
from support.cli import ONE_ASYNC_CHILD, Dpone

PARTIAL = [{"match": {"method": "POST", "path_prefix": "/mock/v1/dataset-jobs"},
            "fault": "partial", "accepted_rows": 120}]


def _next_generation(registry: Path) -> None:
    workload = registry / "workloads" / "measurements_async.yaml"
    text = workload.read_text("utf-8")
    anchor = "    generation_from: scheduled_interval\n"
    assert anchor in text
    workload.write_text(text.replace(anchor, anchor + "    correction_revision: 1\n"), "utf-8")


def test_a_reconciled_partial_generation_lets_the_next_generation_replace_the_window(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread) -> None:
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)
    receiver.state.faults.install(PARTIAL)
    partial = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--wait", "--format", "json")
    assert partial.code == 4, partial.out + partial.err
    child = partial.json()["blocked"]["operation_id"]
    assert partial.json()["blocked"]["code"] == "REST_DELIVERY_PARTIALLY_APPLIED"
    job = dpone.inspect(child, "--format", "json").json()["children"][0]["receipt"]["id"]

    _next_generation(registry)
    waiting = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--wait", "--format", "json")
    assert waiting.code == 4, waiting.out + waiting.err
    assert waiting.json()["stopped"]["code"] == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT"
    assert receiver.state.ledger.snapshot()["mutations_total"] == 1  # nothing sent meanwhile

    confirmed = dpone("delivery", "reconcile", "--operation-id", child, "--receipt-id", job,
                      "--journal", dpone.journal_url, "--artifacts",
                      str(dpone.state / "artifacts"), "--plans", str(dpone.state), "--apply",
                      "--actor", "ops", "--format", "json")
    assert confirmed.code == 4, confirmed.out + confirmed.err  # the effect stays partial
    assert confirmed.json()["effect"] == "partially_applied"

    replaced = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--wait", "--format", "json")
    assert replaced.code == 0, replaced.out + replaced.err
    assert replaced.json()["status"] == "completed"
    ledger = receiver.state.ledger.snapshot()
    assert (ledger["mutations_total"], ledger["duplicate_mutations"]) == (2, 0)
    assert sorted(ledger["rows_by_key"].values()) == [120, 190]
