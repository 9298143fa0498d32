"""`dpone delivery resume` over loopback: it reads only the journal, the stored plan and the
sealed payload documents, so a changed source never stops an admitted delivery."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import content_digest
from dpone.receiver import ReceiverThread
from support.cli import FULL, TOKEN, TOKEN_ENV, TWO_ASYNC_CHILDREN, Dpone, posts, receiver_requests


@pytest.fixture
def dpone(registry: Path, tmp_path: Path) -> Dpone:
    return Dpone(registry, tmp_path / "state")


def _pending_async(dpone: Dpone, receiver: ReceiverThread) -> tuple[str, dict[str, Any]]:
    """`dpone deliver` without --wait: child 1 holds a durable receipt, child 2 is sealed."""
    run = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["status"] == "pending"
    assert [c["state_name"] for c in document["children"]] == ["accepted", "sealed"]
    assert posts(receiver) == 1
    return str(document["parent_id"]), document


def _change_source(registry: Path) -> None:
    """Alter one row of 2026-08-01 in the registry's copy of the source file."""
    data = registry / "data" / "measurements.csv"
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[5].startswith("2026-08-01,")
    lines[5] = lines[5].replace(",", ",9", 1)
    data.write_text("".join(lines), encoding="utf-8")


def _journal_rows(dpone: Dpone) -> list[tuple[object, ...]]:
    with sqlite3.connect(dpone.state / "journal.sqlite3") as connection:
        return connection.execute("SELECT operation_id, revision, state_name, payload_document_key "
                                  "FROM rest_delivery_child ORDER BY ordinal").fetchall()


def test_resume_observes_the_accepted_job_after_the_source_changed(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    parent_id, pending = _pending_async(dpone, receiver)
    job = pending["children"][0]["receipt"]["id"]
    _change_source(registry)

    conflict = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")

    assert conflict.code == 2, conflict.out + conflict.err
    assert conflict.json()["code"] == "REST_DELIVERY_INTENT_CONFLICT"
    assert "dpone delivery resume --operation-id" in conflict.json()["hint"]
    assert posts(receiver) == 1

    run = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")

    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["schema"] == "dpone.delivery_result.v1"
    assert document["status"] == "completed" and document["checkpoint_frontier"] == 2
    assert document["rows_total"] == 520 and [c["rows"] for c in document["children"]] == [190, 330]
    first, second = document["children"]
    assert first["receipt"]["id"] == job and first["attempt_ordinal"] == 1
    assert second["attempt_ordinal"] == 1
    assert {c["state_name"] for c in document["children"]} == {"final_succeeded_full_promoted"}
    requests = receiver_requests(receiver)
    assert posts(receiver) == 2  # the first job was never resubmitted: only child 2's submit
    assert requests.get(f"GET /mock/v1/dataset-jobs/{job}", 0) >= 1
    ledger = receiver.state.ledger.snapshot()
    assert ledger["mutations_total"] == 2 and ledger["duplicate_mutations"] == 0
    assert ledger["rows_total"] == 520
    assert TOKEN not in run.out + run.err
    assert dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN).code == 2


def test_resume_text_summary_and_a_child_id(dpone: Dpone, receiver: ReceiverThread) -> None:
    parent_id, _ = _pending_async(dpone, receiver)

    run = dpone.resume(f"{parent_id}_0002", "--apply", "--wait")

    assert run.code == 0, run.out + run.err
    assert "completed: [2026-08-01, 2026-08-07) 520 rows in 2 child(ren); frontier 2/2" in run.out
    assert f"resuming delivery {parent_id}: 2 child(ren)" in run.err
    assert "child 2/2 [2026-08-04, 2026-08-07) submitting attempt 1" in run.err
    assert posts(receiver) == 2


def test_preview_lists_next_actions_and_sends_and_writes_nothing(
        dpone: Dpone, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    parent_id, _ = _pending_async(dpone, receiver)
    before, journal = receiver_requests(receiver), _journal_rows(dpone)
    monkeypatch.delenv(TOKEN_ENV)  # a preview never resolves the credential

    run = dpone.resume(parent_id, "--format", "json")

    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["schema"] == "dpone.delivery_resume_preview.v1"
    assert document["applied"] is False and document["complete"] is False
    assert document["sealed_documents_verified"] == 2
    assert [(c["ordinal"], c["next_action"], c["on_apply"]) for c in document["children"]] == [
        (1, "poll_receipt", "poll_receipt"), (2, "resume_delivery", "submit")]
    text = dpone.resume(parent_id)
    assert text.code == 0, text.out + text.err
    assert "read-only: nothing sent or written" in text.out
    assert "child 1 accepted: next poll_receipt; --apply: poll receipt job-" in text.out
    assert "child 2 sealed: next resume_delivery; --apply: submit attempt 1" in text.out
    assert f"next: dpone delivery resume --operation-id {parent_id} --journal " in text.out
    assert text.out.rstrip().endswith(" --apply")
    assert receiver_requests(receiver) == before
    assert _journal_rows(dpone) == journal


def test_a_tampered_payload_document_exits_2_before_any_request(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    parent_id, _ = _pending_async(dpone, receiver)
    key = str(_journal_rows(dpone)[1][3])
    path = dpone.state / "artifacts" / key
    document = json.loads(path.read_bytes())
    document["identities"]["delivery_key"] = "sha256:" + "1" * 64
    path.chmod(0o644)
    path.write_text(json.dumps(document), encoding="utf-8")
    before = receiver_requests(receiver)

    for extra in ((), ("--apply", "--wait")):
        run = dpone.resume(parent_id, *extra, "--format", "json")

        assert run.code == 2, run.out + run.err
        error = run.json()
        assert error["code"] == "REST_DELIVERY_INTENT_CONFLICT"
        assert error["details"]["payload_document_key"] == key
    assert receiver_requests(receiver) == before


def test_a_document_of_another_intent_under_its_own_key_exits_2(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    """A well-formed document that hashes to its key but names another delivery key."""
    parent_id, _ = _pending_async(dpone, receiver)
    store = LocalArtifactStore(dpone.state / "artifacts")
    operation_id, _, _, key = _journal_rows(dpone)[1]
    document = json.loads(store.get_bytes(str(key)))
    document["identities"]["delivery_key"] = "sha256:" + "2" * 64
    forged = json.dumps(document, sort_keys=True).encode("utf-8")
    forged_key = f"payloads/sha256/{content_digest(forged).removeprefix('sha256:')}.json"
    store.put_bytes(forged_key, forged)
    with sqlite3.connect(dpone.state / "journal.sqlite3") as connection:
        connection.execute("UPDATE rest_delivery_child SET payload_document_key = ? "
                           "WHERE operation_id = ?", (forged_key, operation_id))
    before = receiver_requests(receiver)

    run = dpone.resume(parent_id, "--apply", "--format", "json")

    assert run.code == 2, run.out + run.err
    error = run.json()
    assert error["code"] == "REST_DELIVERY_INTENT_CONFLICT"
    assert error["details"]["field"] == "delivery_key"
    assert error["operation_id"] == operation_id
    assert receiver_requests(receiver) == before


def test_without_the_plan_store_the_published_plan_is_read_from_the_artifact_store(
        dpone: Dpone, receiver: ReceiverThread, tmp_path: Path) -> None:
    parent_id, _ = _pending_async(dpone, receiver)
    for plan in (dpone.state / "plans" / "sha256").glob("*.json"):
        plan.unlink()

    run = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")

    assert run.code == 0, run.out + run.err
    assert run.json()["status"] == "completed"
    assert posts(receiver) == 2


def test_a_missing_plan_is_plan_not_found_with_a_hint_to_pass_plans(
        dpone: Dpone, receiver: ReceiverThread, tmp_path: Path) -> None:
    parent_id, _ = _pending_async(dpone, receiver)
    before = receiver_requests(receiver)
    published = list((dpone.state / "artifacts" / "plans" / "sha256").glob("*.json"))
    assert len(published) == 1  # `dpone deliver` published the plan into the artifact store
    published[0].unlink()

    elsewhere = dpone("delivery", "resume", "--operation-id", parent_id, "--apply",
                      "--journal", str(dpone.state / "journal.sqlite3"),
                      "--artifacts", str(dpone.state / "artifacts"),
                      "--plans", str(tmp_path / "no-plans"), "--format", "json")
    for plan in (dpone.state / "plans" / "sha256").glob("*.json"):
        plan.unlink()
    deleted = dpone.resume(parent_id, "--apply", "--format", "json")

    for run in (elsewhere, deleted):
        assert run.code == 2, run.out + run.err
        error = run.json()
        assert error["code"] == "plan.not_found"
        assert "--plans" in error["hint"] and "--environment" in error["hint"]
    assert receiver_requests(receiver) == before


def test_resume_of_a_blocked_unknown_child_exits_4_and_sends_nothing(
        dpone: Dpone, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    receiver.state.faults.install([{"match": {"method": "POST", "path_prefix": "/mock/v1/batches/"},
                                    "fault": "commit_then_drop"}])
    delivered = dpone.deliver("measurements_sync", FULL, "--format", "json")
    assert delivered.code == 4, delivered.out + delivered.err
    parent_id = delivered.json()["parent_id"]
    before = receiver_requests(receiver)
    monkeypatch.delenv(TOKEN_ENV)  # nothing is sent, so no credential is ever resolved

    preview = dpone.resume(parent_id, "--format", "json")
    run = dpone.resume(parent_id, "--apply", "--format", "json")

    assert preview.code == 0, preview.out + preview.err
    assert [(c["on_apply"], c["next_action"]) for c in preview.json()["children"]] == [
        ("stop", "inspect_evidence"), *[("not_reached", "resume_delivery")] * 4]
    assert run.code == 4, run.out + run.err
    blocked = run.json()["blocked"]
    assert blocked["code"] == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert blocked["allowed_actions"] == ["inspect_evidence", "reconcile_delivery_key"]
    assert receiver_requests(receiver) == before


@pytest.mark.parametrize("operation_id", ["op_v1_zz", "op_v1_" + "0" * 64])
def test_resume_of_a_malformed_or_unknown_id_exits_2(dpone: Dpone, receiver: ReceiverThread,
                                                      operation_id: str) -> None:
    assert dpone.deliver("measurements_sync", ("2026-08-01", "2026-08-08")).code == 0
    run = dpone.resume(operation_id, "--apply", "--format", "json")
    assert run.code == 2
    assert run.json()["code"] in {"input.invalid_argument", "journal.not_found"}
