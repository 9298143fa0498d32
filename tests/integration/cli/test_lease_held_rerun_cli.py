"""A rerun of `dpone deliver` while another worker holds a mutation lease of the admitted
delivery (a crashed run's lease, until it expires): it stops at once, before any freeze or seal
work, and names the holder and the expiry by the journal clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.cli._inputs import close_quietly, open_existing_journal
from dpone.receiver import ReceiverThread
from support.cli import TWO_ASYNC_CHILDREN, Dpone, posts

HOLDER = "dpone-cli:crashed-host:4242"


def test_a_rerun_stops_on_a_held_lease_before_any_seal_work(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)
    first = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
    assert first.code == 0, first.out + first.err
    sealed_child = first.json()["children"][1]
    assert sealed_child["state_name"] == "sealed"
    journal = open_existing_journal(dpone.journal_url, environment_id="local-dev")
    try:
        lease = journal.acquire_lease(sealed_child["operation_id"], "mutation", HOLDER, 3600)
    finally:
        close_quietly(journal)
    expires = lease.expires_at.isoformat(timespec="seconds").replace("+00:00", "Z")
    seal_calls: list[object] = []
    monkeypatch.setattr("dpone.cli.delivery._boundary_run.sealed_boundary",
                        lambda *args, **kwargs: seal_calls.append(args))

    rerun = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")

    assert rerun.code == 3, rerun.out + rerun.err
    error = rerun.json()
    assert error["code"] == "journal.lease_held"
    assert error["operation_id"] == sealed_child["operation_id"]
    assert HOLDER in error["message"] and expires in error["message"]
    assert error["details"]["holder"] == HOLDER
    assert error["details"]["expires_at"] == expires
    assert 0 < error["details"]["expires_in_s"] <= 3600
    assert seal_calls == []  # no freeze, no seal
    assert "sealing" not in rerun.err
    assert posts(receiver) == 1  # nothing was sent again

    text = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN)
    assert text.code == 3
    assert HOLDER in text.err + text.out and expires in text.err + text.out
