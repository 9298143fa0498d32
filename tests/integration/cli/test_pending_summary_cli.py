"""An asynchronous `deliver` without --wait returns once the first receipt is durable (exit 0,
pending): its summary says how many children are observed and how many are not submitted yet,
and its next command is the resume that continues them."""

from __future__ import annotations

from pathlib import Path

from dpone.receiver import ReceiverThread
from support.cli import Dpone

FOUR_CHILDREN = ("2026-08-10", "2026-08-20")


def test_a_pending_run_counts_what_remains_and_names_the_command_that_continues(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread) -> None:
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)

    run = dpone.deliver("measurements_async", FOUR_CHILDREN, "--format", "json")
    text = dpone.deliver("measurements_async", FOUR_CHILDREN)

    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["status"] == "pending" and document["children_total"] == 4
    pending = document["pending"]
    assert (pending["children_observing"], pending["children_not_submitted"]) == (1, 3)
    assert document["next_command"].startswith(
        f"dpone delivery resume --operation-id {document['parent_id']} ")
    assert document["next_command"].endswith("--apply --wait")
    assert text.code == 0
    assert "1 child(ren) observed, 3 not submitted yet: exit 0 means pending" in text.out
