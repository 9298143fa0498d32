"""What `dpone deliver` and `dpone delivery resume --apply` print once a delivery is admitted:
one schema whatever stopped the run, the summary with the real next command (carrying every
non-default locator), a line per repeated submit or poll, bounded progress, and a warning when
the source changed since the last seal."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from dpone.receiver import ReceiverThread
from support.cli import FULL, ONE_ASYNC_CHILD, TOKEN_ENV, Dpone, Run, bind_registry
from support.common import free_port

WEEK = ("2026-08-01", "2026-08-08")
_NEXT = re.compile(r"^\s*next: (dpone .*)$", re.M)


def _next(run: Run) -> list[str]:
    """The printed next command, split as a shell would (without the leading ``dpone``)."""
    commands = _NEXT.findall(run.out)
    assert len(commands) == 1, run.out
    words = shlex.split(commands[0])
    assert words[0] == "dpone"
    return words[1:]


def _assert_stopped(run: Run, code: str, parent_id: str | None = None) -> dict[str, Any]:
    assert run.code == 3, run.out + run.err
    document = run.json()
    assert document["schema"] == "dpone.delivery_result.v1"
    assert document["status"] == "stopped"
    stopped = document["stopped"]
    assert stopped["code"] == code and stopped["exit_code"] == 3
    assert str(document["parent_id"]).startswith("op_v1_")
    if parent_id is not None:
        assert document["parent_id"] == parent_id
    assert f"--operation-id {document['parent_id']}" in str(document["next_command"])
    assert "--operation-id ID" not in run.out + run.err
    return document


# --- a run stopped by its environment after admission -------------------------------------------


def test_an_unreachable_receiver_gives_the_summary_and_one_schema_on_every_run(
        tmp_path: Path, receiver: ReceiverThread, journal_url: str) -> None:
    dpone = Dpone(bind_registry(tmp_path / "closed", f"http://127.0.0.1:{free_port()}"), tmp_path / "state",
                  journal=journal_url)

    first = dpone.deliver("measurements_sync", WEEK, "--format", "json")

    document = _assert_stopped(first, "receiver.unavailable")
    parent_id = str(document["parent_id"])
    [child] = document["children"]
    assert child["state_name"] == "retry_wait"
    assert child["axes"]["remote_effect"] == "NONE_PROVEN"
    assert document["next_command"].endswith("--apply")
    assert "resume" in document["stopped"]["hint"]

    again = dpone.deliver("measurements_sync", WEEK, "--format", "json")
    _assert_stopped(again, "receiver.unavailable", parent_id)

    text = dpone.deliver("measurements_sync", WEEK)
    assert text.code == 3, text.out + text.err
    assert text.out.splitlines()[0].split()[:5] == ["#", "scope", "rows", "bytes", "state"]
    assert "stopped: [2026-08-01, 2026-08-08) 630 rows in 1 child(ren); frontier 0/1" in text.out
    assert f"  parent {parent_id}" in text.out
    assert "  receiver.unavailable: " in text.out
    assert _next(text)[:4] == ["delivery", "resume", "--operation-id", parent_id]

    resumed = dpone.resume(parent_id, "--apply", "--format", "json")
    _assert_stopped(resumed, "receiver.unavailable", parent_id)


def test_a_missing_credential_stops_before_freezing_with_one_error_document(
        dpone_on: Dpone, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV)

    first = dpone_on.deliver("measurements_sync", WEEK, "--format", "json")

    assert first.code == 3, first.out + first.err
    document = first.json()
    assert (document["schema"], document["code"]) == ("dpone.error.v1", "credential.unavailable")
    assert receiver.state.ledger.snapshot()["requests"] == {}
    text = dpone_on.deliver("measurements_sync", WEEK)
    assert text.code == 3 and text.out == ""
    assert "credential.unavailable" in text.err and "sealed child" not in text.err
    assert "Traceback" not in text.err


@pytest.fixture
def dpone_on(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal=journal_url)


# --- waits and retries are visible ---------------------------------------------------------------


def test_every_repeated_submit_prints_its_reason_and_next_attempt(
        tmp_path: Path, receiver: ReceiverThread) -> None:
    dpone = Dpone(bind_registry(tmp_path / "closed", f"http://127.0.0.1:{free_port()}"), tmp_path / "state")

    run = dpone.deliver("measurements_sync", WEEK)

    assert run.code == 3, run.out + run.err
    waits = [line for line in run.err.splitlines() if "never reached the receiver" in line]
    assert [line.split("never reached")[0].split(")")[-1].strip() for line in waits] == [
        "submit attempt 1 of 3", "submit attempt 2 of 3"]
    for attempt, line in enumerate(waits, start=2):
        assert re.search(rf"\(connect: .*\); attempt {attempt} at "
                         r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in \d+\.\d s\)$", line), line


def test_every_failed_receipt_poll_prints_its_reason_and_next_poll(
        dpone_on: Dpone, receiver: ReceiverThread) -> None:
    pending = dpone_on.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    assert pending.code == 0 and pending.json()["status"] == "pending", pending.out + pending.err
    receiver.state.faults.install([{"match": {"method": "GET",
                                              "path_prefix": "/mock/v1/dataset-jobs/"},
                                    "fault": "status", "status": 503, "times": 2}])

    run = dpone_on.resume(str(pending.json()["parent_id"]), "--apply", "--wait")

    assert run.code == 0, run.out + run.err
    polls = [line for line in run.err.splitlines() if "receipt poll failed" in line]
    assert len(polls) == 2, run.err
    for failures, line in enumerate(polls, start=1):
        assert re.search(rf"receipt poll failed \({failures} of 20 in a row\) \(HTTP 503\); "
                         r"next poll at \S+Z \(in \d+\.\d s\)$", line), line
    assert "completed: " in run.out


def test_sealing_thousands_of_children_prints_bounded_progress(
        tmp_path: Path, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda _fd: None)  # durability is not under test here
    registry = bind_registry(tmp_path, receiver.base_url)
    profile = registry / "profiles" / "mock.batch-ndjson@1.yaml"
    text = profile.read_text(encoding="utf-8")
    profile.write_text(text.replace("  max_rows: 2000\n  planning_rows: 1500\n",
                                    "  max_rows: 3\n  planning_rows: 3\n"), encoding="utf-8")
    dpone = Dpone(registry, tmp_path / "state")

    run = dpone("seal", str(registry / "workloads" / "measurements_sync.yaml"), "--registry",
                str(registry), "--interval-start", FULL[0], "--interval-end", FULL[1],
                "--artifacts", str(tmp_path / "state" / "artifacts"), "--format", "json")

    assert run.code == 0, run.out + run.err
    total = run.json()["child_count"]
    assert total > 1000
    lines = run.err.splitlines()
    progress = [line for line in lines if line.startswith("sealed child ")]
    assert 10 <= len(progress) <= 100
    assert progress[-1] == f"sealed child {total}/{total}"
    assert len(lines) <= 102


# --- next commands carry every non-default locator -----------------------------------------------


def test_next_commands_open_the_custom_journal_artifacts_and_plans(
        registry: Path, tmp_path: Path, receiver: ReceiverThread, journal_url: str) -> None:
    state = tmp_path / "custom state"  # a space: the printed command must be shell-quoted
    dpone = Dpone(registry, state, journal=journal_url)

    pending = dpone.deliver("measurements_async", ONE_ASYNC_CHILD)

    assert pending.code == 0, pending.out + pending.err
    words = _next(pending)
    assert words[:2] == ["delivery", "resume"] and words[-2:] == ["--apply", "--wait"]
    assert words[words.index("--journal") + 1] == journal_url
    assert words[words.index("--artifacts") + 1] == str(state / "artifacts")
    assert words[words.index("--plans") + 1] == str(state)

    preview = dpone(*words[:-2])  # without --apply --wait: the read-only preview
    assert preview.code == 0, preview.out + preview.err
    assert _next(preview)[:-1] == words[:-2]

    completed = dpone(*words)
    assert completed.code == 0, completed.out + completed.err
    assert "completed: " in completed.out
    inspect = _next(completed)
    assert inspect[:2] == ["delivery", "inspect"] and "--journal" in inspect
    # inspect reads the plan the artifact store holds when the plan store does not
    assert inspect[inspect.index("--artifacts") + 1] == str(state / "artifacts")
    inspected = dpone(*inspect, "--format", "json")
    assert inspected.code == 0, inspected.out + inspected.err
    assert inspected.json()["complete"] is True


def test_seal_and_check_print_a_runnable_next_command(
        registry: Path, tmp_path: Path, receiver: ReceiverThread) -> None:
    state = tmp_path / "odd 'dir'"
    workload = str(registry / "workloads" / "measurements_sync.yaml")
    dpone = Dpone(registry, state)

    checked = dpone("check", workload, "--registry", str(registry))
    assert _next(checked) == ["plan", workload, "--registry", str(registry)]

    sealed = dpone("seal", workload, "--registry", str(registry), "--interval-start", WEEK[0],
                   "--interval-end", WEEK[1], "--artifacts", str(state / "artifacts"))
    assert sealed.code == 0, sealed.out + sealed.err
    words = _next(sealed)
    assert words == ["deliver", workload, "--registry", str(registry), "--interval-start",
                     WEEK[0], "--interval-end", WEEK[1], "--artifacts", str(state / "artifacts")]
    delivered = dpone(*words, "--journal", str(state / "journal.sqlite3"), "--plans", str(state),
                      "--format", "json")
    assert delivered.code == 0, delivered.out + delivered.err
    assert delivered.json()["status"] == "completed"


# --- a source that changed since its last seal ----------------------------------------------------


def test_deliver_says_when_the_source_changed_since_the_last_seal(
        dpone_on: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    workload = str(registry / "workloads" / "measurements_sync.yaml")
    artifacts = str(dpone_on.state / "artifacts")
    sealed = dpone_on("seal", workload, "--registry", str(registry), "--interval-start", WEEK[0],
                      "--interval-end", WEEK[1], "--artifacts", artifacts, "--format", "json")
    assert sealed.code == 0, sealed.out + sealed.err
    data = registry / "data" / "measurements.csv"
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[5].startswith("2026-08-01,")
    lines[5] = lines[5].replace(",", ",9", 1)
    data.write_text("".join(lines), encoding="utf-8")

    run = dpone_on.deliver("measurements_sync", WEEK, "--format", "json")

    assert run.code == 0, run.out + run.err
    changed = run.json()["source_changed_since_seal"]
    assert changed["sealed_parent_digest"] == sealed.json()["parent_digest"]
    assert changed["frozen_parent_digest"] != changed["sealed_parent_digest"]
    assert changed["sealed_rows"] == changed["frozen_rows"] == 630
    assert changed["seal_record"].startswith("seals/sha256/")
    assert "warning: the source changed since the last seal" in run.err
    assert sealed.json()["parent_digest"] in run.err

    again = dpone_on.deliver("measurements_sync", WEEK, "--format", "json")
    assert again.code == 0, again.out + again.err
    assert again.json()["source_changed_since_seal"] is None
    assert "warning" not in again.err


def test_an_unchanged_source_says_nothing(dpone_on: Dpone, registry: Path,
                                          receiver: ReceiverThread) -> None:
    workload = str(registry / "workloads" / "measurements_sync.yaml")
    sealed = dpone_on("seal", workload, "--registry", str(registry), "--interval-start", WEEK[0],
                      "--interval-end", WEEK[1], "--artifacts", str(dpone_on.state / "artifacts"))
    assert sealed.code == 0, sealed.out + sealed.err

    run = dpone_on.deliver("measurements_sync", WEEK, "--format", "json")

    assert run.code == 0, run.out + run.err
    assert run.json()["source_changed_since_seal"] is None
    assert "warning" not in run.err
