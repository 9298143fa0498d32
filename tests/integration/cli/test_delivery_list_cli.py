"""`dpone delivery list`: the deliveries of a journal, newest first, on both journals; read-only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpone.cli._inputs import close_quietly, open_journal
from support.cli import FULL, ONE_ASYNC_CHILD, Dpone


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal=journal_url)


def _list(dpone: Dpone, *extra: str) -> tuple[int, str, str]:
    run = dpone("delivery", "list", "--journal", dpone.journal_url, *extra)
    return run.code, run.out, run.err


def test_deliveries_are_listed_newest_first_with_status_frontier_and_age(dpone: Dpone) -> None:
    completed = dpone.deliver("measurements_sync", FULL, "--format", "json").json()
    pending = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json").json()
    assert (completed["status"], pending["status"]) == ("completed", "pending")

    code, out, err = _list(dpone)

    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["parent", "route", "boundary", "status", "frontier", "age"]
    newest, oldest = lines[1].split(), lines[2].split()
    assert newest[:6] == [pending["parent_id"], "measurements_async", "[2026-08-01,",
                          "2026-08-04)", "pending", "0/1"]
    assert oldest[:6] == [completed["parent_id"], "measurements_sync", "[2026-08-01,",
                          "2026-09-01)", "completed", "5/5"]
    assert newest[6].endswith("s") or newest[6].endswith("m")
    assert "2 delivery(ies) in journal" in out
    assert f"next: dpone delivery inspect --operation-id {pending['parent_id']}" in out

    code, out, _ = _list(dpone, "--status", "pending", "--format", "json")

    assert code == 0
    listed = json.loads(out)
    assert listed["schema"] == "dpone.delivery_list.v1"
    assert listed["scanned"] == 2 and listed["statuses"] == ["pending"]
    [entry] = listed["deliveries"]
    assert entry["parent_id"] == pending["parent_id"]
    assert (entry["status"], entry["checkpoint_frontier"], entry["children_total"]) == (
        "pending", 0, 1)
    assert entry["children_by_state"] == {"accepted": 1}
    assert entry["next_actions"] == ["poll_receipt"] and entry["age_s"] >= 0
    assert listed["journal"] == dpone.journal_url


def test_the_limit_reads_only_the_newest(dpone: Dpone) -> None:
    dpone.deliver("measurements_sync", FULL)
    newest = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json").json()

    code, out, _ = _list(dpone, "--limit", "1")

    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[1:2]] == [newest["parent_id"]]
    assert "only the 1 newest were read: raise --limit" in out


def test_an_empty_journal_prints_a_helpful_line(dpone: Dpone) -> None:
    close_quietly(open_journal(dpone.journal_url, environment_id="local-dev"))

    code, out, _ = _list(dpone)
    assert code == 0
    assert out.startswith(f"no deliveries in journal {dpone.journal_url} (environment local-dev) "
                          "yet; `dpone deliver WORKLOAD")
    code, out, _ = _list(dpone, "--format", "json")
    assert code == 0 and '"deliveries": []' in out


def test_a_missing_sqlite_journal_is_an_error_and_is_not_created(registry: Path,
                                                                 tmp_path: Path) -> None:
    dpone = Dpone(registry, tmp_path / "state")

    code, out, err = _list(dpone)
    json_code, json_out, _ = _list(dpone, "--format", "json")

    assert code == json_code == 2, out + err
    assert out == "" and "journal.not_found" in err and dpone.journal_url in err
    assert "hint: Check --journal" in err
    assert '"code": "journal.not_found"' in json_out
    assert not Path(dpone.journal_url).exists() and not Path(dpone.journal_url).parent.exists()
