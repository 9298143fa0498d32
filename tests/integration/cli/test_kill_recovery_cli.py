"""A run killed while its sync submit was on the wire is recovered in three commands, counted
literally: `inspect`, `reconcile --apply`, `resume --apply`.

The killed run's output already names its delivery (the first line names its stores, the
delivery line its parent and child ids). `inspect` shows the lost run's mutation lease and until
when it is held (journal clock) and prints the reconcile command for the child it left in
SUBMITTING; `reconcile --apply` waits for that lease to expire (one TTL at most, with a progress
line), records the lost submit as UNKNOWN and the operator's proof in one command; `resume
--apply` promotes. The receiver applied the batch exactly once.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, Dpone

ONE_SYNC_CHILD = ("2026-08-01", "2026-08-08")
TTL_S = 4


def _short_leases(registry: Path) -> None:
    environment = registry / "environments" / "local-dev.yaml"
    text = environment.read_text(encoding="utf-8")
    environment.write_text(re.sub(r"^leases: .*$", f"leases: {{ttl_s: {TTL_S}, heartbeat_s: 1}}",
                                  text, flags=re.M), encoding="utf-8")


def _killed(registry: Path, cwd: Path, cut: str = "after:send") -> tuple[str, str]:
    """A `dpone deliver` of one sync child (leases of 4 s) killed at ``cut`` (by default right
    after its request left): its stderr and the parent id it named."""
    _short_leases(registry)
    killed = _killed_deliver(registry, cwd, cut)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    found = re.search(r"delivery (op_v1_[0-9a-f]{64}): delivering", killed.stderr)
    assert found is not None, killed.stderr
    return killed.stderr, found.group(1)


def _killed_deliver(registry: Path, cwd: Path, cut: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, TOKEN_ENV: TOKEN, "DPONE_TEST_CUT": cut, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", "from dpone.cli.main import main; main()", "deliver",
         str(registry / "workloads" / "measurements_sync.yaml"), "--registry", str(registry),
         "--interval-start", ONE_SYNC_CHILD[0], "--interval-end", ONE_SYNC_CHILD[1]],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


def _settled(receiver: ReceiverThread, timeout_s: float = 30.0) -> None:
    """Wait until the receiver has seen the killed run's request and handled it to its end."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        posted = any(line.startswith("POST ")
                     for line in receiver.state.ledger.snapshot()["requests"])
        if posted and receiver.state.handling == 0:
            return
        time.sleep(0.05)
    pytest.fail("the receiver did not finish handling the killed run's request")


@pytest.mark.parametrize("cut", ["after:send", "before:send"])
def test_a_kill_during_a_sync_submit_is_recovered_in_three_commands(
        registry: Path, tmp_path: Path, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch, cut: str) -> None:
    """Killed after its request left (the receiver may or may not have applied it) or just
    before (it did not): the operator attests what the receiver's console shows."""
    stderr, parent = _killed(registry, tmp_path, cut)
    assert stderr.splitlines()[0].startswith("stores: journal ")
    child_id = f"{parent}_0001"
    assert child_id in stderr
    # The request left; whether the receiver applied it before the connection died is the
    # receiver's to say (its console, here its ledger, once it has handled what it was sent):
    # that is what the operator attests.
    if cut == "after:send":
        _settled(receiver)
    applied = receiver.state.ledger.snapshot()["mutations_total"]
    assert applied in (0, 1)
    monkeypatch.chdir(tmp_path)
    dpone = Dpone(registry, registry / ".dpone")
    where = ["--environment", "local-dev", "--registry", str(registry)]

    # 1. inspect: the lost run's lease, until when, and the reconcile command.
    inspected = dpone("delivery", "inspect", "--operation-id", parent, *where)
    document = dpone("delivery", "inspect", "--operation-id", parent, *where,
                     "--format", "json").json()
    assert inspected.code == 0, inspected.out + inspected.err
    assert "leases held (journal clock):" in inspected.out
    assert re.search(r"child 1 mutation lease: dpone-cli:\S+ until \S+Z \(\d+ s\)",
                     inspected.out), inspected.out
    [lease] = [held for held in document["leases"] if held["kind"] == "mutation"]
    assert lease["operation_id"] == child_id and 0 <= lease["expires_in_s"] <= TTL_S
    assert document["children"][0]["allowed_actions"] == [
        "wait_for_mutation_lease", "reconcile_delivery_key", "inspect_evidence"]
    assert f"dpone delivery reconcile --operation-id {child_id}" in inspected.out

    # 2. reconcile --apply with the receiver console's word: waits for the lease, then records.
    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps({
        "schema": "dpone.operator_evidence.v1",
        "effect": "applied" if applied else "not_applied", "accepted_rows": 630 * applied,
        "rejected_rows": 0, "receiver_reference": "the receiver console",
        "attested_by": "ops"}), encoding="utf-8")
    reconciled = dpone("delivery", "reconcile", "--operation-id", child_id, *where,
                       "--evidence", str(evidence), "--apply", "--format", "json")
    assert reconciled.code == 0, reconciled.out + reconciled.err
    assert reconciled.json()["after"]["state_name"] == (
        "final_not_accepted_full_eligible" if applied else "final_not_accepted_none")

    # 3. resume --apply: promoted; resent only when the receiver proved it applied nothing.
    resumed = dpone("delivery", "resume", "--operation-id", parent, *where,
                    "--apply", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    assert resumed.json()["status"] == "completed"
    ledger = receiver.state.ledger.snapshot()
    assert (ledger["mutations_total"], ledger["duplicate_mutations"]) == (1, 0)


def test_resume_apply_waits_for_a_lost_run_s_lease_instead_of_refusing(
        registry: Path, tmp_path: Path, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _, parent_id = _killed(registry, tmp_path)
    dpone = Dpone(registry, registry / ".dpone")
    where = ["--environment", "local-dev", "--registry", str(registry)]

    preview = dpone("delivery", "resume", "--operation-id", parent_id, *where)
    resumed = dpone("delivery", "resume", "--operation-id", parent_id, *where, "--apply")

    assert preview.code == 0, preview.out + preview.err
    assert re.search(r"held by dpone-cli:\S+ until \S+Z, journal clock: --apply waits for it",
                     preview.out) or "(it has)" in preview.out, preview.out
    assert resumed.code == 4, resumed.out + resumed.err  # the lost submit is UNKNOWN
    assert "journal.lease_held" not in resumed.out + resumed.err
    assert "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN" in resumed.out
    assert receiver.state.ledger.snapshot()["duplicate_mutations"] == 0
