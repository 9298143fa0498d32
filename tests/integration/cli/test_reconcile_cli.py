"""`dpone delivery reconcile` as a new operator uses it, over loopback, on both journals.

A reset after commit leaves a child's effect UNKNOWN (exit 4); the operator inspects it, proves
the effect (a receipt found in the receiver's console, polled read-only, or attested evidence),
records it, and `resume --apply --wait` finishes the delivery: every row applied exactly once,
the reconciliation artifact stored and schema-valid, the audit rows present. A proof that
contradicts the journal is refused and changes nothing.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from dpone.compiler.schemas import schema_for
from dpone.receiver import ReceiverThread
from support.cli import FULL, TWO_ASYNC_CHILDREN, Dpone, posts
from support.reconcile import DROP_ASYNC, DROP_SYNC, bare_duplicate, journal_state, reconcile


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal_url)


def _evidence(tmp_path: Path, **fields: Any) -> Path:
    document = {"schema": "dpone.operator_evidence.v1", "effect": "applied",
                "accepted_rows": 0, "rejected_rows": 0, "receiver_reference": "console batch",
                "attested_by": "ops@example.test", **fields}
    path = tmp_path / f"evidence-{len(list(tmp_path.glob('evidence-*')))}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _stored(dpone: Dpone, prefix: str) -> list[Path]:
    return sorted((dpone.state / "artifacts" / prefix).glob("*.json"))


def _blocked_child(run: Any) -> tuple[str, str, int]:
    assert run.code == 4, run.out + run.err
    document = run.json()
    blocked = document["blocked"]
    assert "reconcile_delivery_key" in blocked["allowed_actions"]
    child = next(c for c in document["children"] if c["operation_id"] == blocked["operation_id"])
    return str(document["parent_id"]), str(blocked["operation_id"]), int(child["rows"])


def _check_artifact(dpone: Dpone, document: dict[str, Any]) -> dict[str, Any]:
    artifact = document["reconciliation_artifact"]
    data = (dpone.state / "artifacts" / artifact["key"]).read_bytes()
    stored = json.loads(data)
    jsonschema.validate(stored, schema_for("dpone.rest_delivery_reconciliation.v1"))
    assert stored["reconciliation_id"] == document["reconciliation_id"]
    assert "T" not in json.dumps({k: v for k, v in stored.items() if k != "before"})  # no clock
    return dict(stored)


def test_sync_reset_after_commit_reconciled_by_evidence_then_resumed(
        dpone: Dpone, receiver: ReceiverThread, tmp_path: Path) -> None:
    receiver.state.faults.install([DROP_SYNC])
    parent_id, child_id, rows = _blocked_child(
        dpone.deliver("measurements_sync", FULL, "--format", "json"))
    inspected = dpone.inspect(child_id, "--format", "json")
    assert inspected.code == 0, inspected.out + inspected.err
    evidence = _evidence(tmp_path, accepted_rows=rows)

    preview = reconcile(dpone, child_id, "--evidence", str(evidence), "--format", "json")
    assert preview.code == 0, preview.out + preview.err
    assert preview.json()["applied"] is False and not _stored(dpone, "reconciliations/sha256")
    applied = reconcile(dpone, child_id, "--evidence", str(evidence), "--apply",
                         "--actor", "ops@example.test", "--format", "json")

    assert applied.code == 0, applied.out + applied.err
    document = applied.json()
    assert document["effect"] == "applied" and document["capacity"] == "released"
    assert document["proof"]["authority"] == "operator_attested"
    assert document["after"]["state_name"] == "final_not_accepted_full_eligible"
    assert document["after"]["revision"] == document["before"]["revision"] + 2
    assert "dpone delivery resume" in document["next_command"]
    stored = _check_artifact(dpone, document)
    assert stored["proof"]["kind"] == "operator_evidence"
    resumed = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    assert resumed.json()["status"] == "completed"
    ledger = receiver.state.ledger.snapshot()
    assert ledger["duplicate_mutations"] == 0
    assert ledger["rows_total"] == resumed.json()["rows_total"]
    assert all(count == 1 for count in _mutations_by_key(receiver).values())
    _check_audit(dpone, child_id, document, actor="ops@example.test")


def test_async_reset_after_commit_reconciled_by_receipt_then_resumed(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    bare_duplicate(registry)
    receiver.state.faults.install([DROP_ASYNC])
    parent_id, child_id, _rows = _blocked_child(
        dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json"))
    inspected = dpone.inspect(child_id, "--format", "json")
    assert inspected.code == 0, inspected.out + inspected.err
    filename = next(c["payload_filename"] for c in inspected.json()["children"]
                    if c["operation_id"] == child_id)
    job = receiver.state.jobs.by_filename(filename)  # what the operator finds in the console
    assert job is not None
    submits = posts(receiver)

    applied = reconcile(dpone, child_id, "--receipt-id", job.job_id, "--apply", "--format",
                         "json")

    assert applied.code == 0, applied.out + applied.err
    document = applied.json()
    proof = document["proof"]
    assert (proof["kind"], proof["authority"], proof["receipt_id"]) == (
        "receipt", "receiver_proven", job.job_id)
    assert document["effect"] in {"applied", "running"}
    assert posts(receiver) == submits  # the poll is read-only
    _check_artifact(dpone, document)
    resumed = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    result = resumed.json()
    assert result["status"] == "completed" and result["checkpoint_frontier"] == 2
    first = next(c for c in result["children"] if c["operation_id"] == child_id)
    assert first["attempt_ordinal"] == 2  # the reset attempt and its replay; nothing after
    ledger = receiver.state.ledger.snapshot()
    assert ledger["duplicate_mutations"] == 0 and ledger["rows_total"] == result["rows_total"]
    assert all(count == 1 for count in _mutations_by_key(receiver).values())
    _check_audit(dpone, child_id, document)


def test_proven_not_applied_is_resubmitted_with_the_same_key(
        dpone: Dpone, receiver: ReceiverThread, tmp_path: Path) -> None:
    receiver.state.faults.install([{**DROP_SYNC, "fault": "status", "status": 502,
                                    "after_commit": False}])
    run = dpone.deliver("measurements_sync", FULL, "--format", "json")
    parent_id, child_id, _rows = _blocked_child(run)
    assert receiver.state.ledger.snapshot()["mutations_total"] == 0
    evidence = _evidence(tmp_path, effect="not_applied")

    applied = reconcile(dpone, child_id, "--evidence", str(evidence), "--apply", "--format",
                         "json")

    assert applied.code == 0, applied.out + applied.err
    assert applied.json()["after"]["state_name"] == "final_not_accepted_none"
    resumed = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    child = next(c for c in resumed.json()["children"] if c["operation_id"] == child_id)
    assert child["attempt_ordinal"] == 2 and child["state_name"].endswith("_full_promoted")
    assert child["delivery_key"] == next(c for c in run.json()["children"]
                                         if c["operation_id"] == child_id)["delivery_key"]
    ledger = receiver.state.ledger.snapshot()
    assert ledger["duplicate_mutations"] == 0
    assert all(count == 1 for count in _mutations_by_key(receiver).values())


@pytest.mark.parametrize("refusal", ["counts_above_sealed", "unknown_field", "release_digest",
                                     "profile_digest", "applied_with_rejections"])
def test_a_contradicting_reconcile_is_refused_and_changes_nothing(
        dpone: Dpone, receiver: ReceiverThread, tmp_path: Path, refusal: str) -> None:
    receiver.state.faults.install([DROP_SYNC])
    parent_id, child_id, rows = _blocked_child(
        dpone.deliver("measurements_sync", FULL, "--format", "json"))
    extra: list[str] = []
    expected = {"counts_above_sealed": (4, "reconcile.counts_contradict"),
                "applied_with_rejections": (4, "reconcile.counts_contradict"),
                "unknown_field": (2, "reconcile.evidence_invalid"),
                "release_digest": (2, "reconcile.digest_mismatch"),
                "profile_digest": (2, "reconcile.digest_mismatch")}[refusal]
    fields: dict[str, Any] = {"accepted_rows": rows}
    if refusal == "counts_above_sealed":
        fields["accepted_rows"] = rows + 1
    elif refusal == "applied_with_rejections":
        fields.update(accepted_rows=rows - 1, rejected_rows=1)
    elif refusal == "unknown_field":
        fields["confidence"] = "high"
    elif refusal == "release_digest":
        extra = ["--expected-release-digest", "sha256:" + "1" * 64]
    else:
        extra = ["--expected-profile-contract-digest", "sha256:" + "2" * 64]
    evidence = _evidence(tmp_path, **fields)
    before = journal_state(dpone, parent_id)
    artifacts = sorted(p for p in (dpone.state / "artifacts").rglob("*") if p.is_file())

    run = reconcile(dpone, child_id, "--evidence", str(evidence), *extra, "--apply",
                     "--format", "json")

    assert (run.code, run.json()["code"]) == expected, run.out + run.err
    if refusal == "unknown_field":
        assert str(evidence) in run.json()["message"]
    assert journal_state(dpone, parent_id) == before
    assert sorted(p for p in (dpone.state / "artifacts").rglob("*") if p.is_file()) == artifacts


def test_a_receipt_of_another_delivery_key_is_refused_and_changes_nothing(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    bare_duplicate(registry)
    other = dpone.deliver("measurements_async", ("2026-08-10", "2026-08-13"), "--wait",
                          "--format", "json")
    assert other.code == 0, other.out + other.err
    other_job = str(other.json()["children"][0]["receipt"]["id"])
    receiver.state.faults.install([DROP_ASYNC])
    parent_id, child_id, _rows = _blocked_child(
        dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json"))
    before = journal_state(dpone, parent_id)

    run = reconcile(dpone, child_id, "--receipt-id", other_job, "--apply", "--format", "json")

    assert run.code == 4, run.out + run.err
    assert run.json()["code"] == "reconcile.key_mismatch"
    assert journal_state(dpone, parent_id) == before
    assert not _stored(dpone, "reconciliations/sha256")


def test_a_parent_id_names_the_children_to_pick(dpone: Dpone, receiver: ReceiverThread,
                                                 tmp_path: Path) -> None:
    receiver.state.faults.install([DROP_SYNC])
    parent_id, child_id, _rows = _blocked_child(
        dpone.deliver("measurements_sync", FULL, "--format", "json"))

    run = reconcile(dpone, parent_id, "--evidence", str(_evidence(tmp_path)), "--format", "json")

    assert run.code == 2, run.out + run.err
    assert run.json()["details"]["children"] == [child_id]


def _mutations_by_key(receiver: ReceiverThread) -> dict[str, int]:
    counts: dict[str, int] = {}
    for mutation in receiver.state.ledger.mutations:
        counts[mutation.key] = counts.get(mutation.key, 0) + 1
    return counts


def _audit_rows(dpone: Dpone, child_id: str) -> list[dict[str, Any]]:
    """The journal's audit rows of ``child_id``, read straight from its tables."""
    query = ("SELECT actor, transition_id, revision, reconciliation_id, evidence_digest, digests "
             "FROM rest_delivery_audit WHERE operation_id = {} ORDER BY audit_id")
    if dpone.journal_url.startswith("postgresql"):
        import psycopg  # noqa: PLC0415 - only the PostgreSQL variant needs the driver
        from psycopg.rows import dict_row  # noqa: PLC0415

        with psycopg.connect(dpone.journal_url, row_factory=dict_row) as connection:
            return list(connection.execute(query.format("%s"), (child_id,)).fetchall())
    with sqlite3.connect(dpone.journal_url) as connection:
        connection.row_factory = sqlite3.Row
        rows = [dict(row) for row in connection.execute(query.format("?"), (child_id,))]
    return [{**row, "digests": json.loads(row["digests"])} for row in rows]


def _check_audit(dpone: Dpone, child_id: str, document: dict[str, Any],
                 actor: str | None = None) -> None:
    rows = _audit_rows(dpone, child_id)
    operator = [row for row in rows if row["transition_id"] == "operator_reconcile"]
    assert len(operator) == 1
    row = operator[0]
    assert row["evidence_digest"] == document["proof"]["evidence_digest"]
    assert row["reconciliation_id"] == document["reconciliation_id"]
    assert row["digests"]["command"] == "reconcile"
    assert row["digests"]["before_revision"] == document["before"]["revision"]
    assert row["digests"]["after_revision"] == document["after"]["revision"]
    assert row["digests"]["proof"] == document["proof"]["kind"]
    assert row["digests"]["reconciliation_artifact"] == (
        document["reconciliation_artifact"]["digest"])
    if actor is not None:
        assert row["actor"] == actor
    assert [r["transition_id"] for r in rows if r["reconciliation_id"]] == [
        *document["transitions"], "operator_reconcile"]
    assert re.fullmatch(r"rec_v1_[0-9a-f]{64}", document["reconciliation_id"])
