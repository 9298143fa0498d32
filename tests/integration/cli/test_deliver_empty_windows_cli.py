"""`dpone deliver` over a boundary with date windows without rows, on both journals: only the
windows with rows are POSTed, the empty ones are shown as skipped, and the delivery completes."""

from __future__ import annotations

from pathlib import Path

from dpone.receiver import ReceiverThread
from support.cli import Dpone, posts

WIDE = ("2026-06-01", "2026-10-15")
"""The example data holds rows from 2026-08-01 to 2026-08-31 only."""


def test_empty_windows_are_skipped_and_only_windows_with_rows_are_posted(
        registry: Path, tmp_path: Path, receiver: ReceiverThread, journal_url: str) -> None:
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)

    run = dpone.deliver("measurements_sync", WIDE)

    assert run.code == 0, run.out + run.err
    again = dpone.deliver("measurements_sync", WIDE, "--format", "json")
    assert again.code == 0, again.out + again.err
    document = again.json()
    children = document["children"]
    empty = [c for c in children if c["rows"] == 0]
    full = [c for c in children if c["rows"] > 0]
    assert empty and full, "the interval must hold windows with and without rows"
    assert document["status"] == "completed"
    assert document["checkpoint_frontier"] == document["children_total"] == len(children)
    assert posts(receiver) == len(full)
    assert receiver.state.ledger.snapshot()["mutations_total"] == len(full)
    for child in empty:
        assert child["state_name"] == "final_not_started"
        assert child["empty_input"] == "skipped"
        assert (child["attempt_ordinal"], child["receipt"]) == (0, {})
    assert {c["empty_input"] for c in full} == {None}
    lines = run.out.splitlines()
    skipped = [line for line in lines if "skipped (empty)" in line]
    assert len(skipped) == len(empty)
    # checkpoint "-" (no checkpoint of its own; the journal's axis stays BLOCKED), attempts 0,
    # no receipt
    assert all(line.split()[-2:] == ["-", "0"] for line in skipped)
    assert {c["axes"]["checkpoint_state"] for c in empty} == {"BLOCKED"}
    total = len(children)
    assert f"completed: [{WIDE[0]}, {WIDE[1]}) 3203 rows in {total} child(ren); " \
           f"frontier {total}/{total}" in lines
    assert len(empty) > 1
    assert (f"  empty child(ren): {len(empty)} skipped, nothing sent (no checkpoint of their "
            "own; the frontier passes over them)") in lines
    parent_id = document["parent_id"]

    inspected = dpone.inspect(parent_id, "--format", "json")

    assert inspected.code == 0, inspected.err
    inspection = inspected.json()
    assert inspection["complete"] is True and inspection["next_actions"] == []
    assert [c["empty_input"] for c in inspection["children"]] == [
        c["empty_input"] for c in children]
    assert all(c["allowed_actions"] == [] for c in inspection["children"])

    listed = dpone("delivery", "list", "--journal", dpone.journal_url, "--format", "json")

    assert listed.code == 0, listed.err
    [entry] = listed.json()["deliveries"]
    assert (entry["parent_id"], entry["status"]) == (parent_id, "completed")


def test_one_skipped_window_reads_in_the_singular_and_inspect_shows_no_checkpoint(
        registry: Path, tmp_path: Path, receiver: ReceiverThread, journal_url: str) -> None:
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)

    run = dpone.deliver("measurements_sync", ("2026-08-25", "2026-09-08"))

    assert run.code == 0, run.out + run.err
    assert ("  empty child(ren): 1 skipped, nothing sent (no checkpoint of its own; the frontier "
            "passes over it)") in run.out.splitlines()
    parent_id = next(line.split()[1] for line in run.out.splitlines()
                     if line.startswith("  parent "))
    inspected = dpone.inspect(parent_id)
    assert inspected.code == 0, inspected.out + inspected.err
    [skipped] = [line for line in inspected.out.splitlines() if "skipped (empty)" in line]
    header = next(line for line in inspected.out.splitlines() if line.split()[:2] == ["#", "scope"])
    assert skipped[header.index("checkpoint"):].split()[0] == "-"
    assert "BLOCKED" not in skipped
