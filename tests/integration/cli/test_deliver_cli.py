"""`dpone deliver` and `dpone delivery inspect` over loopback: output, exit codes, resumption."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import FULL, ONE_ASYNC_CHILD, TOKEN, Dpone, bind_registry, posts
from support.common import free_port


@pytest.fixture
def dpone(registry: Path, tmp_path: Path) -> Dpone:
    return Dpone(registry, tmp_path / "state")


def test_sync_delivery_prints_the_summary_and_inspect_shows_every_axis(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    run = dpone.deliver("measurements_sync")

    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0].split()[:5] == ["#", "scope", "rows", "bytes", "state"]
    assert "completed: [2026-08-01, 2026-09-01) 3203 rows in 5 child(ren); frontier 5/5" in lines
    assert "child 1/5 [2026-08-01, 2026-08-08) submitting attempt 1" in run.err
    parent_id = next(line.split()[1] for line in lines if line.startswith("  parent "))
    assert receiver.state.ledger.snapshot()["rows_total"] == 3203

    inspected = dpone.inspect(parent_id, "--format", "json")

    assert inspected.code == 0, inspected.err
    document = inspected.json()
    assert document["schema"] == "dpone.delivery_inspection.v1"
    assert document["complete"] is True and document["next_actions"] == []
    assert document["checkpoint_frontier"] == 5 and document["profile"] == "mock.batch-ndjson@1"
    for child in document["children"]:
        assert child["axes"] == {"execution_state": "FINALIZED", "remote_effect": "FULLY_APPLIED",
                                 "acknowledgement_state": "SUCCEEDED",
                                 "verification_state": "PASSED", "checkpoint_state": "PROMOTED"}
        assert child["payload_key"].startswith("payloads/sha256/")
        assert [a["outcome"] for a in child["attempts"]] == ["submitting_sync_success"]
        assert child["receipt_age_s"] >= 0 and "receipt_ttl_horizon" in child
    assert TOKEN not in run.out + run.err + inspected.out + inspected.err


def test_json_result_of_a_sync_delivery(dpone: Dpone) -> None:
    run = dpone.deliver("measurements_sync", FULL, "--format", "json")

    assert run.code == 0, run.err
    document = run.json()
    assert document["schema"] == "dpone.delivery_result.v1"
    assert document["status"] == "completed"
    assert [c["rows"] for c in document["children"]] == [630, 760, 1030, 593, 190]
    assert {c["state_name"] for c in document["children"]} == {"final_succeeded_full_promoted"}


def test_async_delivery_is_pending_on_a_durable_receipt_then_completes_on_rerun(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    first = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")

    assert first.code == 0, first.err
    pending = first.json()
    assert pending["status"] == "pending"
    assert pending["pending"]["continuation_kind"] == "poll_receipt"
    assert pending["children"][0]["state_name"] == "accepted"
    child_id = pending["pending"]["operation_id"]
    assert dpone.inspect(child_id, "--format", "json").json()["children"][0][
        "allowed_actions"] == ["poll_receipt"]

    second = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--wait")

    assert second.code == 0, second.err
    assert "completed: [2026-08-01, 2026-08-04) 190 rows in 1 child(ren); frontier 1/1" in second.out
    assert posts(receiver) == 1
    assert receiver.state.ledger.snapshot()["rows_total"] == 190
    child = dpone.inspect(child_id, "--format", "json").json()["children"][0]
    assert child["observations_total"] >= 1
    assert child["observations"][-1]["transition_id"].endswith("_poll_succeeded")
    assert child["observations"][-1]["document"]["phase"] == "complete"
    assert child["receipt"]["accepted_rows"] == 190


def test_unknown_effect_exits_4_with_the_next_safe_action(dpone: Dpone,
                                                          receiver: ReceiverThread) -> None:
    receiver.state.faults.install([{"match": {"method": "POST", "path_prefix": "/mock/v1/batches/"},
                                    "fault": "commit_then_drop"}])

    run = dpone.deliver("measurements_sync")

    assert run.code == 4, run.out + run.err
    assert "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN: remote effect UNKNOWN" in run.out
    assert "allowed next actions: inspect_evidence, reconcile_delivery_key" in run.out
    child_id = next(line.split()[1] for line in run.out.splitlines()
                    if line.startswith("  operation "))
    inspected = dpone.inspect(child_id)
    assert inspected.code == 0
    assert "error REST_DELIVERY_REMOTE_EFFECT_UNKNOWN" in inspected.out
    assert "next actions: inspect_evidence, reconcile_delivery_key" in inspected.out

    again = dpone.deliver("measurements_sync", FULL, "--format", "json")

    assert again.code == 4
    assert again.json()["blocked"]["code"] == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert posts(receiver) == 1


def test_an_unreachable_receiver_exits_3_and_the_child_waits_for_the_next_run(
        tmp_path: Path, receiver: ReceiverThread) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    dpone = Dpone(bind_registry(tmp_path / "closed", closed), tmp_path / "state")

    run = dpone.deliver("measurements_sync", ("2026-08-01", "2026-08-08"), "--format", "json")

    assert run.code == 3, run.out + run.err
    stopped = run.json()["stopped"]
    assert stopped["code"] == "receiver.unavailable"
    inspected = dpone.inspect(stopped["operation_id"], "--format", "json").json()
    child = inspected["children"][0]
    assert child["state_name"] == "retry_wait"
    assert child["axes"]["remote_effect"] == "NONE_PROVEN"
    assert child["allowed_actions"] == ["resume_delivery"]


def test_changed_source_bytes_for_the_same_boundary_exit_2_before_any_request(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    assert dpone.deliver("measurements_sync").code == 0
    before = receiver.state.ledger.snapshot()["requests"]
    data = registry / "data" / "measurements.csv"
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[5] = lines[5].replace(",", ",9", 1) if lines[5].count(",") else lines[5]
    data.write_text("".join(lines), encoding="utf-8")

    run = dpone.deliver("measurements_sync", FULL, "--format", "json")

    assert run.code == 2, run.out + run.err
    assert run.json()["code"] == "REST_DELIVERY_INTENT_CONFLICT"
    assert receiver.state.ledger.snapshot()["requests"] == before


@pytest.mark.parametrize("operation_id", ["op_v1_zz", "not-an-id"])
def test_inspect_refuses_a_malformed_operation_id(dpone: Dpone, operation_id: str) -> None:
    run = dpone.inspect(operation_id, "--format", "json")
    assert run.code == 2
    assert run.json()["code"] == "input.invalid_argument"


def test_inspect_of_an_unknown_delivery_exits_2(dpone: Dpone) -> None:
    assert dpone.deliver("measurements_sync", ("2026-08-01", "2026-08-08")).code == 0
    run = dpone.inspect("op_v1_" + "0" * 64, "--format", "json")
    assert run.code == 2
    assert run.json()["code"] == "journal.not_found"


def test_a_boundary_without_rows_admits_and_sends_nothing(dpone: Dpone,
                                                          receiver: ReceiverThread) -> None:
    run = dpone.deliver("measurements_sync", ("2026-10-01", "2026-10-08"), "--format", "json")

    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["status"] == "empty"
    assert document["empty_input"] == "skip"
    assert receiver.state.ledger.snapshot()["requests"] == {}


def test_a_dropped_job_submit_under_the_certified_fence_is_replayed_once_and_exits_0(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    receiver.state.faults.install([{"match": {"method": "POST",
                                              "path_prefix": "/mock/v1/dataset-jobs"},
                                    "fault": "commit_then_drop"}])

    run = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--wait", "--format", "json")

    assert run.code == 0, run.out + run.err
    child = run.json()["children"][0]
    assert child["state_name"] == "final_succeeded_full_promoted"
    assert child["attempt_ordinal"] == 2
    ledger = receiver.state.ledger.snapshot()
    assert posts(receiver) == 2
    assert ledger["mutations_total"] == 1 and ledger["duplicate_mutations"] == 0
    assert ledger["rows_total"] == 190
    attempts = dpone.inspect(child["operation_id"], "--format", "json").json()["children"][0][
        "attempts"]
    assert [a["outcome"] for a in attempts] == ["submitting_fenced_replay",
                                               "replay_duplicate_receipt_same_intent"]


def test_an_unresolved_effect_stops_the_next_delivery_in_its_domain(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    receiver.state.faults.install([{"match": {"method": "POST", "path_prefix": "/mock/v1/batches/"},
                                    "fault": "commit_then_drop"}])
    first = dpone.deliver("measurements_sync", ("2026-08-01", "2026-08-08"), "--format", "json")
    assert first.code == 4
    unknown = first.json()["blocked"]["operation_id"]

    run = dpone.deliver("measurements_sync", ("2026-08-08", "2026-08-15"), "--format", "json")

    assert run.code == 4, run.out + run.err
    error = run.json()["stopped"]  # admitted, then stopped before its first request
    assert error["code"] == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT"
    assert unknown in error["message"]
    assert posts(receiver) == 1


def test_sync_delivery_completes_on_either_journal(
        registry: Path, tmp_path: Path, receiver: ReceiverThread, journal_url: str) -> None:
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)

    run = dpone.deliver("measurements_sync")
    again = dpone.deliver("measurements_sync")

    assert run.code == 0, run.err
    assert again.code == 0, again.err
    assert posts(receiver) == 5
    assert dpone.inspect(run.out.split("parent ")[1].split()[0]).code == 0
