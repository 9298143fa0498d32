"""A reconciliation covers the orphan MAY_ATTEMPT marker a lost run left, on both journals.

The run gets a 429 on its asynchronous job, starts a certified same-key replay, publishes the
replay's marker for attempt 2 and is killed (SIGKILL, ``DPONE_TEST_CUT``) before its SUBMITTING
transaction. From another process and working directory: ``resume`` takes over (the lease was
lost after SUBMITTING: effect UNKNOWN, exit 4); the operator reconciles ``not_applied`` with
evidence of the receiver's ledger, and the reconciliation lists the orphan and consumes its
ordinal; ``resume --apply --wait`` then submits attempt 3 with the same delivery key and the
delivery completes with exactly one mutation under the key. Without the orphan consumed, the
resubmit planned attempt 2 again under the orphan's key and stopped with ``artifact.conflict``
on every resume.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from dpone.cli._inputs import close_quietly, open_existing_journal
from dpone.contracts import content_digest
from dpone.contracts.journal import may_attempt_marker_key
from dpone.receiver import ReceiverThread
from support.fault_matrix import Cell, CellSpec, LeaseWait, fault_rules

CUT = "before:submitting@2"


def test_reconcile_covers_the_orphan_marker_and_resume_submits_a_fresh_attempt(
        tmp_path: Path, receiver: ReceiverThread, journal_url: str) -> None:
    cell = Cell(CellSpec("cli", "async_bulk_job", CUT, "throttle_429"), tmp_path, journal_url,
                receiver)
    for rule in fault_rules("async_bulk_job", "throttle_429"):
        receiver.state.faults.install([rule])
    killed = cell.run("cut", cell.deliver_args(), cwd=tmp_path / "cut", cut=CUT)
    assert killed.record.exit_code == -9 and f"test cut {CUT}" in killed.stderr
    work = tmp_path / "recover"
    listed = cell.run("discovery", ["delivery", "list", "--journal", journal_url,
                                    "--format", "json"], cwd=work)
    parent_id = listed.document["deliveries"][0]["parent_id"]

    taken_over = LeaseWait(cell, time.monotonic()).run("restart", cell.resume_args(parent_id),
                                                        work)
    assert taken_over.record.exit_code == 4, taken_over.stderr[-2000:]
    assert taken_over.record.status == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    journal = open_existing_journal(journal_url, environment_id="local-dev")
    try:
        child = journal.load_parent(parent_id).children[0]
    finally:
        close_quietly(journal)
    assert child.attempt_ordinal == 1
    orphan_key = may_attempt_marker_key(child.tenancy.operation_namespace, child.operation_id, 2)
    assert (cell.artifacts / orphan_key).is_file()  # published, never entered SUBMITTING
    assert cell.console_word(child)[0] == "--evidence"  # no job: the 429 created none
    evidence = json.loads((tmp_path / "console" / "evidence-1.json").read_text(encoding="utf-8"))
    assert (evidence["effect"], evidence["accepted_rows"]) == ("not_applied", 0)

    reconciled = cell.run("operator", [
        "delivery", "reconcile", "--operation-id", child.operation_id, *cell._state(),
        "--evidence", str(tmp_path / "console" / "evidence-1.json"), "--actor", "ops",
        "--apply", "--format", "json"], cwd=work)

    assert reconciled.record.exit_code == 0, reconciled.stderr[-2000:]
    document = reconciled.document
    assert document["effect"] == "not_applied" and document["applied"] is True
    orphan_digest = content_digest((cell.artifacts / orphan_key).read_bytes())
    assert document["orphan_markers"] == [
        {"attempt_ordinal": 2, "marker_key": orphan_key, "marker_digest": orphan_digest}]
    assert document["after"]["revision"] == document["before"]["revision"] + 3
    artifact = json.loads((cell.artifacts / document["reconciliation_artifact"]["key"])
                          .read_text(encoding="utf-8"))
    assert artifact["orphan_markers"] == document["orphan_markers"]

    resumed = cell.run("operator", cell.resume_args(parent_id), cwd=work)

    assert resumed.record.exit_code == 0, resumed.stderr[-2000:]
    assert resumed.record.status == "completed"
    journal = open_existing_journal(journal_url, environment_id="local-dev")
    try:
        attempts = journal.list_attempts(child.operation_id)
        final = journal.get_child(child.operation_id)
    finally:
        close_quietly(journal)
    assert [(a["attempt_ordinal"], a["outcome"]) for a in attempts] == [
        (1, "submitting_mutation_lease_lost"),
        (2, "reconcile_not_accepted_unknown_orphan_consumed"),
        (3, "submitting_async_receipt_accepted")]
    assert attempts[2]["marker_key"] == may_attempt_marker_key(
        child.tenancy.operation_namespace, child.operation_id, 3)
    assert final.state_name == "final_succeeded_full_promoted"
    key = cell.ledger_key(child)
    mutations = [m for m in receiver.state.ledger.mutations if m.key == key]
    assert len(mutations) == 1 and mutations[0].rows == child.row_count
    assert receiver.state.ledger.duplicate_mutations == 0
