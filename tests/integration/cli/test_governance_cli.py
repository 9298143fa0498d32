"""Governance over loopback, on both journals: the deny-only revocation list (`dpone admin
revoke|unrevoke|revocations`), deprecated profiles and the remote identity's expiry.

A revocation stops every new submit of a plan that uses the revoked profile or binding before
any MAY_ATTEMPT marker or request (exit 3, a stable code, a hint naming `dpone admin
unrevoke`), while inspection, the polling of a job already accepted and reconciliation go on;
unrevoking lets `resume --apply` finish with every row applied once. A deprecated profile
compiles no new plan, but a plan compiled before runs on by its digest. An expired identity
attestation blocks new submits the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dpone.receiver import ReceiverThread
from support.cli import FULL, TOKEN, TWO_ASYNC_CHILDREN, Dpone, Run, posts, receiver_requests
from support.reconcile import DROP_SYNC, reconcile

ASYNC_PROFILE = "mock.dataset-jobs@1"
SYNC_PROFILE = "mock.batch-ndjson@1"
BINDING = "mock_measurements"
ONE_SYNC_CHILD = ("2026-08-01", "2026-08-08")


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal_url)


def _admin(dpone: Dpone, *args: str) -> tuple[int, dict[str, Any]]:
    run = dpone("admin", *args, "--journal", dpone.journal_url, "--format", "json")
    return run.code, run.json()


def _markers(dpone: Dpone) -> set[str]:
    """The operation ids that hold a MAY_ATTEMPT marker in the artifact store."""
    return {path.parent.name for path in (dpone.state / "artifacts").rglob("*.json")
            if "markers" in path.parts}


def _stopped(run: Run, code: str) -> dict[str, Any]:
    assert run.code == 3, run.out + run.err
    document = run.json()
    assert document["status"] == "stopped"
    stopped = document["stopped"]
    assert (stopped["code"], stopped["exit_code"]) == (code, 3)
    assert "dpone admin unrevoke" in stopped["hint"] or code == "governance.identity_expired"
    return dict(document)


def test_a_revoked_profile_stops_new_submits_while_polling_and_inspection_go_on(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    pending = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
    assert pending.code == 0, pending.out + pending.err
    document = pending.json()
    assert [c["state_name"] for c in document["children"]] == ["accepted", "sealed"]
    parent, job = str(document["parent_id"]), document["children"][0]["receipt"]["id"]
    second = str(document["children"][1]["operation_id"])

    code, revoked = _admin(dpone, "revoke", "--profile", ASYNC_PROFILE, "--reason",
                           "vendor reported a protocol flaw (INC-42)", "--actor", "sec-oncall")
    assert (code, revoked["change"]) == (0, {"action": "revoke", "kind": "profile",
                                             "ref": ASYNC_PROFILE, "changed": True})
    assert [(e["kind"], e["ref"], e["revoked_by"]) for e in revoked["revoked"]] == [
        ("profile", ASYNC_PROFILE, "sec-oncall")]
    assert any(f"admin unrevoke --profile {ASYNC_PROFILE}" in line
               for line in revoked["next_commands"])

    assert dpone.inspect(parent).code == 0  # read-only inspection stays available
    stopped = _stopped(dpone.resume(parent, "--apply", "--wait", "--format", "json"),
                       "governance.profile_revoked")
    first, held = stopped["children"]
    assert first["state_name"] == "final_succeeded_full_promoted"  # the job was polled
    assert receiver_requests(receiver).get(f"GET /mock/v1/dataset-jobs/{job}", 0) >= 1
    assert (held["state_name"], held["attempt_ordinal"]) == ("sealed", 0)
    assert stopped["stopped"]["operation_id"] == second
    assert second not in _markers(dpone) and posts(receiver) == 1  # nothing new was sent

    code, lifted = _admin(dpone, "unrevoke", "--profile", ASYNC_PROFILE, "--reason",
                          "vendor fix verified", "--actor", "security-owner")
    assert (code, lifted["revoked"], lifted["change"]["changed"]) == (0, [], True)
    assert [h["action"] for h in lifted["history"]] == ["unrevoke", "revoke"]
    resumed = dpone.resume(parent, "--apply", "--wait", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    assert resumed.json()["status"] == "completed"
    ledger = receiver.state.ledger.snapshot()
    assert (ledger["mutations_total"], ledger["duplicate_mutations"]) == (2, 0)
    assert TOKEN not in resumed.out + resumed.err


def test_a_revoked_binding_leaves_reconciliation_available(
        dpone: Dpone, receiver: ReceiverThread, tmp_path: Path) -> None:
    receiver.state.faults.install([DROP_SYNC])
    blocked = dpone.deliver("measurements_sync", FULL, "--format", "json")
    assert blocked.code == 4, blocked.out + blocked.err
    document = blocked.json()
    parent, child = str(document["parent_id"]), str(document["blocked"]["operation_id"])
    rows = next(c["rows"] for c in document["children"] if c["operation_id"] == child)
    code, _ = _admin(dpone, "revoke", "--binding", BINDING, "--reason", "token leaked")
    assert code == 0

    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps({
        "schema": "dpone.operator_evidence.v1", "effect": "applied", "accepted_rows": rows,
        "rejected_rows": 0, "receiver_reference": "console batch",
        "attested_by": "ops@example.test"}), encoding="utf-8")
    applied = reconcile(dpone, child, "--evidence", str(evidence), "--apply", "--format", "json")
    assert applied.code == 0, applied.out + applied.err  # reconciliation is never revoked
    submits = posts(receiver)
    stopped = _stopped(dpone.resume(parent, "--apply", "--format", "json"),
                       "governance.binding_revoked")
    assert posts(receiver) == submits
    assert stopped["stopped"]["operation_id"] not in _markers(dpone)

    assert _admin(dpone, "unrevoke", "--binding", BINDING, "--reason", "rotated")[0] == 0
    resumed = dpone.resume(parent, "--apply", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    assert resumed.json()["status"] == "completed"
    assert receiver.state.ledger.snapshot()["duplicate_mutations"] == 0


def test_revoke_text_names_the_stop_and_the_way_back(dpone: Dpone,
                                                     receiver: ReceiverThread) -> None:
    assert dpone.deliver("measurements_sync", ONE_SYNC_CHILD).code == 0
    run = dpone("admin", "revoke", "--profile", SYNC_PROFILE, "--reason", "INC-7",
                "--actor", "sec-oncall", "--journal", dpone.journal_url)
    assert run.code == 0, run.out + run.err
    assert f"revoked profile {SYNC_PROFILE}" in run.out
    assert "governance.profile_revoked (exit 3)" in run.out
    assert f"next: dpone admin unrevoke --profile {SYNC_PROFILE}" in run.out
    again = dpone("admin", "revoke", "--profile", SYNC_PROFILE, "--reason", "INC-7",
                  "--journal", dpone.journal_url)
    assert again.code == 0 and "already revoked: nothing changed" in again.out
    listing = dpone("admin", "revocations", "--journal", dpone.journal_url)
    assert listing.code == 0 and f"profile  {SYNC_PROFILE}  by sec-oncall" in listing.out

    stopped = dpone.deliver("measurements_sync", ("2026-08-08", "2026-08-15"))
    assert stopped.code == 3
    assert "governance.profile_revoked" in stopped.out + stopped.err
    assert "dpone admin unrevoke --profile" in stopped.out + stopped.err


@pytest.mark.parametrize("args", [
    ("revoke", "--reason", "x"),
    ("revoke", "--profile", SYNC_PROFILE, "--binding", BINDING, "--reason", "x"),
    ("revoke", "--profile", "mock.batch-ndjson", "--reason", "x"),
    ("unrevoke", "--binding", "Not A Binding", "--reason", "x"),
    ("revoke", "--binding", BINDING, "--reason", " "),
], ids=["none", "both", "unversioned-profile", "bad-binding", "blank-reason"])
def test_a_malformed_revocation_is_refused_before_the_journal(
        dpone: Dpone, receiver: ReceiverThread, args: tuple[str, ...]) -> None:
    code, document = _admin(dpone, *args)
    assert (code, document["code"]) == (2, "input.invalid_argument")


def test_an_expired_identity_attestation_blocks_new_submits(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    binding = registry / "bindings" / f"{BINDING}.yaml"
    text = binding.read_text(encoding="utf-8")
    text = re.sub(r"verified_at: .*", "verified_at: 2020-01-01T00:00:00Z", text)
    binding.write_text(re.sub(r"valid_until: .*", "valid_until: 2020-06-01T00:00:00Z", text),
                       encoding="utf-8")

    stopped = _stopped(dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json"),
                       "governance.identity_expired")
    assert "2020-06-01" in stopped["stopped"]["message"]
    assert posts(receiver) == 0 and not _markers(dpone)
    assert dpone.inspect(str(stopped["parent_id"])).code == 0


def _deprecate(registry: Path, profile: str) -> Path:
    path = registry / "profiles" / f"{profile}.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\nversion: 1\n", "\nversion: 1\nlifecycle: deprecated\n"),
                    encoding="utf-8")
    return path


def test_a_deprecated_profile_compiles_no_new_plan_but_a_pinned_plan_runs_on(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    workload = str(registry / "workloads" / "measurements_sync.yaml")
    planned = dpone("plan", workload, "--registry", str(registry), "--out", str(dpone.state),
                    "--format", "json")
    assert planned.code == 0, planned.out + planned.err
    digest = str(planned.json()["plan_digest"])
    profile = _deprecate(registry, SYNC_PROFILE)
    line = profile.read_text(encoding="utf-8").splitlines().index("lifecycle: deprecated") + 1

    for command in ("check", "plan"):
        refused = dpone(command, workload, "--registry", str(registry), "--out",
                        str(dpone.state), "--format", "json") if command == "plan" else \
            dpone(command, workload, "--registry", str(registry), "--format", "json")
        assert refused.code == 2, refused.out + refused.err
        error = refused.json()
        assert error["code"] == "profile.deprecated"
        assert (error["location"]["file"], error["location"]["line"]) == (str(profile), line)
    fresh = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")
    assert (fresh.code, fresh.json()["code"]) == (2, "profile.deprecated")
    assert posts(receiver) == 0

    pinned = dpone("deliver", digest, "--registry", str(registry), "--interval-start",
                   ONE_SYNC_CHILD[0], "--interval-end", ONE_SYNC_CHILD[1], "--journal",
                   dpone.journal_url, "--artifacts", str(dpone.state / "artifacts"),
                   "--plans", str(dpone.state), "--format", "json")
    assert pinned.code == 0, pinned.out + pinned.err
    assert pinned.json()["status"] == "completed" and posts(receiver) == 1
