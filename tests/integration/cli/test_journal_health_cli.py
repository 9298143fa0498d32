"""A damaged or foreign journal file, and an unreachable journal: every command refuses with a
catalog code naming the journal (exit 3), one dpone.error.v1 document under --format json, and
nothing is admitted or sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import FULL, ONE_ASYNC_CHILD, Dpone, receiver_requests
from support.common import free_port

PASSWORD = "pw-sentinel-cli-8Hq"


def _corrupt_pages(path: Path) -> None:
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    for start in range(page_size, len(data), page_size):
        data[start:start + page_size] = b"\xa5\x5a" * (page_size // 2)
    path.write_bytes(bytes(data))


@pytest.fixture
def dpone(registry: Path, tmp_path: Path) -> Dpone:
    return Dpone(registry, tmp_path / "state")


def _json_error(out: str) -> dict[str, object]:
    document: dict[str, object] = json.loads(out)
    assert document["schema"] == "dpone.error.v1"
    return document


def test_a_damaged_journal_is_refused_by_inspect_preview_and_deliver(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    first = dpone.deliver("measurements_sync", FULL, "--format", "json")
    assert first.code == 0, first.err
    parent_id = first.json()["parent_id"]
    journal = Path(dpone.journal_url)
    assert not journal.with_name(journal.name + "-wal").exists()
    _corrupt_pages(journal)
    sent = sum(receiver_requests(receiver).values())

    inspected = dpone.inspect(parent_id)
    assert inspected.code == 3
    assert "journal.corrupt" in inspected.err and str(journal) in inspected.err
    assert "backup" in inspected.err and "Traceback" not in inspected.err

    previewed = dpone.resume(parent_id, "--format", "json")
    assert previewed.code == 3
    error = _json_error(previewed.out)
    assert error["code"] == "journal.corrupt" and error["exit_code"] == 3
    assert str(journal) in str(error["message"])

    delivered = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    assert delivered.code == 3, delivered.out
    assert _json_error(delivered.out)["code"] == "journal.corrupt"
    assert sum(receiver_requests(receiver).values()) == sent


def test_a_file_that_is_not_a_database_is_refused(dpone: Dpone,
                                                   receiver: ReceiverThread) -> None:
    journal = Path(dpone.journal_url)
    journal.parent.mkdir(parents=True)
    journal.write_text("this is a note, not a journal\n" * 100, encoding="utf-8")

    inspected = dpone.inspect("op_v1_" + "0" * 64, "--format", "json")
    assert inspected.code == 3
    error = _json_error(inspected.out)
    assert error["code"] == "journal.corrupt"
    assert error["message"] == (f"{journal} is not a SQLite database (file is not a database); "
                                "it cannot be a delivery journal")

    delivered = dpone.deliver("measurements_sync", FULL)
    assert delivered.code == 3 and "journal.corrupt" in delivered.err
    assert sum(receiver_requests(receiver).values()) == 0
    assert journal.read_text(encoding="utf-8").startswith("this is a note")


def test_an_unreachable_postgres_journal_names_the_driver_message_without_password(
        registry: Path, tmp_path: Path) -> None:
    port = free_port()
    url = f"postgresql://dpone:{PASSWORD}@127.0.0.1:{port}/journal"
    dpone = Dpone(registry, tmp_path / "state", journal=url)

    run = dpone.inspect("op_v1_" + "0" * 64, "--format", "json")

    assert run.code == 3
    error = _json_error(run.out)
    assert error["code"] == "journal.unavailable"
    assert "Connection refused" in str(error["message"])
    assert f"at postgresql://dpone@127.0.0.1:{port}/journal" in str(error["message"])
    assert PASSWORD not in run.out + run.err
