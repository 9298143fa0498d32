"""`dpone admin gate`: blocking the environment's mutation gate stops every new mutation before
any MAY_ATTEMPT marker or request, keeps inspection working, and reopening it at a new journal
epoch lets `resume --apply` finish the delivery, every row applied once."""

from __future__ import annotations

from pathlib import Path

from dpone.receiver import ReceiverThread
from support.cli import Dpone

ONE_SYNC_CHILD = ("2026-08-01", "2026-08-08")


def _gate(dpone: Dpone, *args: str) -> tuple[int, dict[str, object]]:
    run = dpone("admin", "gate", *args, "--journal", dpone.journal_url, "--format", "json")
    return run.code, run.json()


def test_a_blocked_gate_stops_mutations_until_a_new_epoch_reopens_it(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread) -> None:
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)
    first = dpone.deliver("measurements_sync", ONE_SYNC_CHILD)
    assert first.code == 0, first.out + first.err
    code, shown = _gate(dpone, "show")
    assert (code, shown["mutation_gate"], shown["journal_epoch"], shown["changed"]) == (
        0, "OPEN", 0, False)

    code, blocked = _gate(dpone, "block", "--reason", "journal restored from backup",
                          "--actor", "ops-oncall")
    assert (code, blocked["mutation_gate"], blocked["updated_by"], blocked["changed"]) == (
        0, "BLOCKED", "ops-oncall", True)
    assert blocked["reason"] == "journal restored from backup"
    assert any("admin gate open --epoch 1" in line for line in blocked["next_commands"])

    stopped = dpone.deliver("measurements_sync", ("2026-08-08", "2026-08-15"), "--format", "json")
    assert stopped.code == 4, stopped.out + stopped.err
    document = stopped.json()
    assert document["status"] == "stopped"
    assert document["stopped"]["code"] == "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED"
    markers = {path.parent.name for path in (tmp_path / "state" / "artifacts").rglob("*.json")
               if "markers" in path.parts}
    assert document["stopped"]["operation_id"] not in markers  # refused before its marker
    assert receiver.state.ledger.snapshot()["mutations_total"] == 1  # nothing new was sent
    parent = document["parent_id"]
    assert dpone.inspect(parent).code == 0  # read-only inspection stays available

    code, refused = _gate(dpone, "open", "--epoch", "0", "--reason", "too early")
    assert (code, refused["code"]) == (2, "input.invalid_argument")
    code, opened = _gate(dpone, "open", "--epoch", "1", "--reason", "campaign approved",
                         "--actor", "security-owner")
    assert (code, opened["mutation_gate"], opened["journal_epoch"]) == (0, "OPEN", 1)

    resumed = dpone.resume(parent, "--apply")
    assert resumed.code == 0, resumed.out + resumed.err
    ledger = receiver.state.ledger.snapshot()
    assert (ledger["mutations_total"], ledger["duplicate_mutations"]) == (2, 0)


def test_show_on_a_missing_journal_is_journal_not_found(tmp_path: Path) -> None:
    dpone = Dpone(tmp_path, tmp_path / "state")
    run = dpone("admin", "gate", "show", "--journal", str(tmp_path / "none.sqlite3"))
    assert run.code == 2
    assert "journal.not_found" in run.err + run.out
