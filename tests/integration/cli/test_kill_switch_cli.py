"""The kill switch `runtime.features.rest_bulk_delivery_v1`: off, no new delivery is admitted;
everything about admitted work goes on. One test per command, against a journal that holds a
pending async delivery and a blocked sync one (its effect unknown), both admitted while the
switch was on, then the switch turned off in the environment file."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, TWO_ASYNC_CHILDREN, Dpone, bind_registry

BLOCKED_WEEK = ("2026-08-08", "2026-08-15")
SWITCH = re.compile(r"^runtime:\n  features: \{rest_bulk_delivery_v1: true\}\n", re.M)


@dataclass(frozen=True)
class Admitted:
    dpone: Dpone
    receiver: ReceiverThread
    pending: str
    """The async delivery, pending on its first receiver job."""
    blocked: str
    """The sync child whose effect is unknown (the receiver committed, then dropped)."""
    blocked_rows: int


def _switch(registry: Path, text: str) -> None:
    path = registry / "environments" / "local-dev.yaml"
    replaced, count = SWITCH.subn(text, path.read_text("utf-8"))
    assert count == 1
    path.write_text(replaced, "utf-8")


@pytest.fixture(scope="module")
def admitted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Admitted]:
    root = tmp_path_factory.mktemp("kill-switch")
    with pytest.MonkeyPatch.context() as patch, ReceiverThread(
            ReceiverConfig(token=TOKEN, processing_seconds=0.5)) as receiver:
        patch.setenv(TOKEN_ENV, TOKEN)
        dpone = Dpone(bind_registry(root, receiver.base_url), root / "state")
        pending = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
        assert pending.code == 0 and pending.json()["status"] == "pending", pending.err
        receiver.state.faults.install([{"match": {"method": "POST",
                                                  "path_prefix": "/mock/v1/batches/"},
                                        "fault": "commit_then_drop"}])
        blocked = dpone.deliver("measurements_sync", BLOCKED_WEEK, "--format", "json")
        assert blocked.code == 4, blocked.err
        unknown = blocked.json()["blocked"]["operation_id"]
        rows = next(c["rows"] for c in blocked.json()["children"]
                    if c["operation_id"] == unknown)
        _switch(dpone.registry, "runtime:\n  features: {rest_bulk_delivery_v1: false}\n")
        yield Admitted(dpone, receiver, pending.json()["parent_id"], unknown, rows)


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


def _posts(receiver: ReceiverThread) -> int:
    return sum(n for line, n in receiver.state.ledger.snapshot()["requests"].items()
               if line.startswith("POST "))


def _requests(receiver: ReceiverThread) -> int:
    return sum(receiver.state.ledger.snapshot()["requests"].values())


def test_deliver_admits_nothing_new(admitted: Admitted) -> None:
    dpone, before = admitted.dpone, _requests(admitted.receiver)
    listed = dpone("delivery", "list", "--journal", dpone.journal_url, "--format", "json")
    stored = sorted(dpone.state.rglob("*"))

    run = dpone.deliver("measurements_sync", ("2026-08-22", "2026-08-29"), "--format", "json")

    assert run.code == 2
    error = run.json()
    assert error["code"] == "runtime.feature_disabled"
    file = dpone.registry / "environments" / "local-dev.yaml"
    assert error["message"] == ("runtime.features.rest_bulk_delivery_v1 is off in "
                                f"{file}: no new delivery is admitted")
    assert error["details"] == {"environment": "local-dev", "file": str(file),
                                "switch": "runtime.features.rest_bulk_delivery_v1"}
    assert "dpone delivery resume" in error["hint"]
    assert _requests(admitted.receiver) == before  # not one request of any kind
    after = dpone("delivery", "list", "--journal", dpone.journal_url, "--format", "json")
    assert len(after.json()["deliveries"]) == len(listed.json()["deliveries"])
    assert sorted(dpone.state.rglob("*")) == stored  # nothing sealed, published or stored


def test_inspect_reads_on(admitted: Admitted) -> None:
    inspected = admitted.dpone.inspect(admitted.pending, "--format", "json")
    assert inspected.code == 0, inspected.err
    assert inspected.json()["parent_id"] == admitted.pending


def test_list_reads_on(admitted: Admitted) -> None:
    dpone = admitted.dpone
    listed = dpone("delivery", "list", "--journal", dpone.journal_url, "--format", "json")
    assert listed.code == 0, listed.err
    assert len(listed.json()["deliveries"]) == 2


def test_metrics_show_reads_on(admitted: Admitted) -> None:
    dpone = admitted.dpone
    shown = dpone("metrics", "show", "--journal", dpone.journal_url, "--format", "json")
    assert shown.code == 0, shown.err


def test_seal_still_seals(admitted: Admitted) -> None:
    dpone = admitted.dpone
    run = dpone("seal", str(dpone.registry / "workloads" / "measurements_sync.yaml"),
                "--registry", str(dpone.registry), "--interval-start", "2026-08-22",
                "--interval-end", "2026-08-29", "--format", "json")
    assert run.code == 0, run.err


def test_reconcile_then_resume_finish_the_blocked_delivery(admitted: Admitted,
                                                           tmp_path: Path) -> None:
    dpone = admitted.dpone
    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps({
        "schema": "dpone.operator_evidence.v1", "effect": "applied",
        "accepted_rows": admitted.blocked_rows, "rejected_rows": 0,
        "receiver_reference": "ledger", "attested_by": "ops"}), "utf-8")
    reconciled = dpone("delivery", "reconcile", "--operation-id", admitted.blocked,
                       "--journal", dpone.journal_url, "--artifacts",
                       str(dpone.state / "artifacts"), "--plans", str(dpone.state),
                       "--evidence", str(evidence), "--apply", "--actor", "ops",
                       "--format", "json")
    assert reconciled.code == 0, reconciled.err
    resumed = dpone.resume(admitted.blocked, "--apply", "--actor", "ops", "--format", "json")
    assert resumed.code == 0, resumed.err
    assert resumed.json()["status"] == "completed"
    assert resumed.json()["checkpoint_frontier"] == 1  # the checkpoint completes


def test_resume_submits_the_admitted_children_that_were_not_sent(admitted: Admitted) -> None:
    dpone, before = admitted.dpone, _posts(admitted.receiver)
    resumed = dpone.resume(admitted.pending, "--apply", "--wait", "--actor", "ops",
                           "--format", "json")
    assert resumed.code == 0, resumed.err
    assert resumed.json()["status"] == "completed"
    assert resumed.json()["checkpoint_frontier"] == 2  # observed, verified and promoted
    assert _posts(admitted.receiver) == before + 1  # the second admitted child, sent now


def test_prune_keeps_retention_working(admitted: Admitted) -> None:
    dpone = admitted.dpone
    pruned = dpone("admin", "prune", "--journal", dpone.journal_url, "--artifacts",
                   str(dpone.state / "artifacts"), "--format", "json")
    assert pruned.code == 0, pruned.err


def test_a_file_older_than_the_switch_names_its_migration_note(tmp_path: Path) -> None:
    dpone = Dpone(bind_registry(tmp_path, "http://127.0.0.1:9"), tmp_path / "state")
    _switch(dpone.registry, "")
    checked = dpone("check", str(dpone.registry / "workloads" / "measurements_sync.yaml"),
                    "--registry", str(dpone.registry))
    assert checked.code == 0, checked.err  # the file still loads: only admission refuses
    run = dpone.deliver("measurements_sync", ("2026-08-01", "2026-08-08"), "--format", "json")
    assert run.code == 2
    error = run.json()
    assert error["code"] == "runtime.feature_disabled"
    assert error["details"]["note"] == "docs/migrations/runtime-kill-switch.md"
    assert "predates the switch" in error["message"]
