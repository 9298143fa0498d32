"""`dpone deliver` stops with ``receiver.rate_limited`` when the receiver account's shared
submit rate leaves no turn within the submit budget: nothing more is sent, exit 3, one JSON
document, the waiting child still sealed, and the printed next command resumes it later."""

from __future__ import annotations

from pathlib import Path

from dpone.receiver import ReceiverThread
from support.cli import Dpone, posts

TWO_SYNC_CHILDREN = ("2026-08-01", "2026-08-15")  # the sync example plans 7-day windows


def _one_submit_a_minute(registry: Path) -> None:
    """The sync profile at one submit a minute, with a 20 s submit budget."""
    profile = registry / "profiles" / "mock.batch-ndjson@1.yaml"
    text = profile.read_text(encoding="utf-8")
    text = text.replace("rate: {submit_per_minute: 600,", "rate: {submit_per_minute: 1,")
    text = text.replace("max_delay_s: 10, budget_s: 120}", "max_delay_s: 10, budget_s: 20}")
    assert "submit_per_minute: 1," in text and "budget_s: 20}" in text
    profile.write_text(text, encoding="utf-8")


def test_a_submit_turn_beyond_the_budget_stops_with_nothing_sent(
        registry: Path, tmp_path: Path, receiver: ReceiverThread, journal_url: str) -> None:
    _one_submit_a_minute(registry)
    dpone = Dpone(registry, tmp_path / "state", journal_url)

    run = dpone.deliver("measurements_sync", TWO_SYNC_CHILDREN, "--format", "json")

    assert run.code == 3, run.err
    assert "Traceback" not in run.out + run.err
    result = run.json()
    assert result["status"] == "stopped"
    stopped = result["stopped"]
    assert stopped["code"] == "receiver.rate_limited"
    assert stopped["details"]["rate_limit"] == "submit_per_minute"
    assert stopped["details"]["wait_s"] > stopped["details"]["remaining_budget_s"]
    assert "dpone delivery resume" in result["next_command"]
    assert posts(receiver) == 1  # the first child's turn; the second never left
    states = [child["state_name"] for child in result["children"]]
    assert states == ["final_succeeded_full_promoted", "sealed"]
