"""The next commands of a child to reconcile are real `dpone delivery reconcile` commands.

Where the profile certifies a query by key (the async example) the command needs no proof to
fill in: deliver, resume and inspect print it, and running it exactly as printed reconciles the
child. Without a lookup (the sync example) the text names the choices, `--evidence FILE` (and
`--receipt-id JOB_ID` for job receipts), and the JSON next command stays `inspect`.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from dpone.receiver import ReceiverThread
from support.cli import FULL, TWO_ASYNC_CHILDREN, Dpone
from support.reconcile import DROP_ASYNC, DROP_SYNC, bare_duplicate


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal_url)


def _run_printed(dpone: Dpone, printed: str, *extra: str) -> Any:
    words = shlex.split(printed)
    assert words[0] == "dpone"
    return dpone(*words[1:], *extra)


def test_a_certified_lookup_prints_a_reconcile_command_that_runs_as_printed(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    bare_duplicate(registry)
    receiver.state.faults.install([DROP_ASYNC])
    run = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
    assert run.code == 4, run.out + run.err
    document = run.json()
    parent_id, child_id = document["parent_id"], document["blocked"]["operation_id"]
    printed = document["next_command"]
    assert printed.startswith(f"dpone delivery reconcile --operation-id {child_id} ")
    assert "--receipt-id" not in printed and "--evidence" not in printed
    resumed = dpone.resume(parent_id, "--apply", "--format", "json")
    assert resumed.code == 4 and resumed.json()["next_command"] == printed
    inspected = dpone.inspect(parent_id)
    assert inspected.code == 0, inspected.out + inspected.err
    assert f"reconcile child 1: dpone delivery reconcile --operation-id {child_id}" in (
        inspected.out)

    reconciled = _run_printed(dpone, printed, "--format", "json")

    assert reconciled.code == 0, reconciled.out + reconciled.err
    assert reconciled.json()["applied"] is True
    assert reconciled.json()["proof"]["kind"] == "query_by_key"


def test_without_a_lookup_the_text_names_the_proofs_to_fill_in(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    receiver.state.faults.install([DROP_SYNC])
    run = dpone.deliver("measurements_sync", FULL, "--format", "json")
    assert run.code == 4, run.out + run.err
    parent_id, child_id = run.json()["parent_id"], run.json()["blocked"]["operation_id"]
    assert run.json()["next_command"].startswith("dpone delivery inspect")

    resumed = dpone.resume(parent_id, "--apply")
    inspected = dpone.inspect(parent_id)

    assert resumed.code == 4, resumed.out + resumed.err
    assert "reconcile it with:" in resumed.out
    assert "reconcile child 1 with:" in inspected.out
    for out in (resumed.out, inspected.out):
        assert f"dpone delivery reconcile --operation-id {child_id}" in out
        assert "--evidence FILE --apply" in out and "dpone.operator_evidence.v1" in out
        assert "--receipt-id" not in out  # a synchronous batch leaves no job to poll
