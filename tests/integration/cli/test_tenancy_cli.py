"""Tenancy over the CLI, against the real mock receiver over loopback, on both journals.

Two tenants share one receiver account (one connection binding) and deliver the same workload
over the same boundary, so their delivery keys are equal; their environments differ only in
``tenant_id``, so their operation namespaces differ. The receiver sees two different
``receiver_mutation_key`` filenames and applies both: neither is taken for a replay of the
other. When both tenants record into one journal (their environments are both ``local-dev``),
the other tenant's operator cannot inspect, reconcile, resume or list the first tenant's
delivery: ``journal.foreign_namespace``, exit 2, nothing written and nothing sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import (
    ONE_ASYNC_CHILD,
    TWO_ASYNC_CHILDREN,
    Dpone,
    bind_registry,
    fresh_journal_url,
    posts,
)

FOREIGN = "journal.foreign_namespace"


def _tenant_registry(root: Path, authority: str, tenant_id: str) -> Path:
    """A copy of the example registry (the same binding, the same receiver account) whose
    ``local-dev`` environment belongs to ``tenant_id``."""
    registry = bind_registry(root, authority)
    environment = registry / "environments" / "local-dev.yaml"
    text = environment.read_text(encoding="utf-8")
    environment.write_text(re.sub(r"^tenant_id: .*$", f"tenant_id: {tenant_id}", text,
                                  flags=re.M), encoding="utf-8")
    return registry


@pytest.fixture
def other_journal_url(journal_url: str, tmp_path: Path,
                      request: pytest.FixtureRequest) -> Iterator[str]:
    """A second fresh journal of the same dialect as ``journal_url`` (another tenant's)."""
    dialect = "postgres" if journal_url.startswith("postgres") else "sqlite"
    with fresh_journal_url(dialect, tmp_path / "other-journal" / "journal.sqlite3", request,
                           prefix="tenant_") as url:
        yield url


def test_two_namespaces_sharing_one_receiver_account_send_different_keys_and_both_apply(
        tmp_path: Path, journal_url: str, other_journal_url: str,
        receiver: ReceiverThread) -> None:
    tenant_a = Dpone(_tenant_registry(tmp_path / "a", receiver.base_url, "tenant-a"),
                     tmp_path / "a" / "state", journal=journal_url)
    tenant_b = Dpone(_tenant_registry(tmp_path / "b", receiver.base_url, "tenant-b"),
                     tmp_path / "b" / "state", journal=other_journal_url)

    first = tenant_a.deliver("measurements_async", ONE_ASYNC_CHILD, "--wait", "--format", "json")
    second = tenant_b.deliver("measurements_async", ONE_ASYNC_CHILD, "--wait", "--format", "json")

    assert first.code == 0 and second.code == 0, first.out + second.out + second.err
    assert first.json()["status"] == second.json()["status"] == "completed"
    [a] = tenant_a.inspect(first.json()["parent_id"], "--format", "json").json()["children"]
    [b] = tenant_b.inspect(second.json()["parent_id"], "--format", "json").json()["children"]
    assert a["delivery_key"] == b["delivery_key"]  # same route, boundary and generation
    assert a["receiver_mutation_key"] != b["receiver_mutation_key"]  # namespace-bound fence
    ledger = receiver.state.ledger.snapshot()
    assert ledger["duplicate_mutations"] == 0
    assert sorted(m["key"] for m in ledger["mutations"]) == sorted(
        key.removeprefix("sha256:") + ".csv.gz"
        for key in (a["receiver_mutation_key"], b["receiver_mutation_key"]))
    assert ledger["rows_total"] == first.json()["rows_total"] + second.json()["rows_total"]
    assert posts(receiver) == 2  # one accepted submit each: no 409 replay of the other's job


def _environment_file(directory: Path, tenant_id: str, journal: str, artifacts: Path) -> None:
    """``environments/local-dev.yaml`` of ``tenant_id`` whose control plane is the shared
    journal (both tenants' environments are called ``local-dev``)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "local-dev.yaml").write_text(
        "schema: dpone.environment.v1\nid: local-dev\ntier: development\n"
        f"platform_instance_id: dpone-local\ntenant_id: {tenant_id}\n"
        "environment_id: local-dev\nnamespace_revision: 1\n"
        "runtime: {features: {rest_bulk_delivery_v1: true}}\n"
        f"control_plane:\n  journal: '{journal}'\n  artifacts: '{artifacts}'\n",
        encoding="utf-8")


@pytest.mark.parametrize("command", [
    ("delivery", "inspect"), ("delivery", "resume"), ("delivery", "resume", "--apply"),
    ("delivery", "reconcile", "--child"), ("delivery", "reconcile", "--child", "--apply")],
    ids=["inspect", "resume-preview", "resume-apply", "reconcile-preview", "reconcile-apply"])
def test_another_namespace_cannot_inspect_resume_or_reconcile_a_delivery(
        tmp_path: Path, journal_url: str, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]) -> None:
    owner = Dpone(_tenant_registry(tmp_path / "a", receiver.base_url, "examples"),
                  tmp_path / "a" / "state", journal=journal_url)
    pending = owner.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
    assert pending.code == 0, pending.out + pending.err
    parent_id = str(pending.json()["parent_id"])
    artifacts = tmp_path / "a" / "state" / "artifacts"
    _environment_file(tmp_path / "owner-envs", "examples", journal_url, artifacts)
    _environment_file(tmp_path / "intruder-envs", "tenant-b", journal_url, artifacts)
    before = owner.inspect(parent_id, "--format", "json").json()
    sent = posts(receiver)
    verb, *flags = command[1:]
    target = parent_id + "_0001" if "--child" in flags else parent_id
    flags = [flag for flag in flags if flag != "--child"]
    if verb == "reconcile":
        flags += ["--receipt-id", before["children"][0]["receipt"]["id"]]

    monkeypatch.setenv("DPONE_ENVIRONMENTS", str(tmp_path / "intruder-envs"))
    refused = owner("delivery", verb, "--operation-id", target, "--environment", "local-dev",
                    *flags, "--format", "json")
    monkeypatch.setenv("DPONE_ENVIRONMENTS", str(tmp_path / "owner-envs"))
    allowed = owner("delivery", "inspect", "--operation-id", parent_id,
                    "--environment", "local-dev", "--format", "json")

    assert refused.code == 2, refused.out + refused.err
    error = refused.json()
    assert error["code"] == FOREIGN and "Traceback" not in refused.out + refused.err
    assert "examples" not in error["message"]  # nothing of the owner's tenancy is shown
    assert allowed.code == 0, allowed.out + allowed.err  # the owner's own environment reads it
    after = owner.inspect(parent_id, "--format", "json").json()
    assert after["children"] == before["children"] and after["operator_actions"] == []
    assert posts(receiver) == sent  # nothing was sent


def test_delivery_list_shows_only_the_environments_own_namespace(
        tmp_path: Path, journal_url: str, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    owner = Dpone(_tenant_registry(tmp_path / "a", receiver.base_url, "examples"),
                  tmp_path / "a" / "state", journal=journal_url)
    delivered = owner.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    assert delivered.code == 0, delivered.out + delivered.err
    artifacts = tmp_path / "a" / "state" / "artifacts"
    _environment_file(tmp_path / "owner-envs", "examples", journal_url, artifacts)
    _environment_file(tmp_path / "intruder-envs", "tenant-b", journal_url, artifacts)

    listed = {}
    for tenant in ("owner", "intruder"):
        monkeypatch.setenv("DPONE_ENVIRONMENTS", str(tmp_path / f"{tenant}-envs"))
        run = owner("delivery", "list", "--environment", "local-dev", "--format", "json")
        assert run.code == 0, run.out + run.err
        listed[tenant] = [d["parent_id"] for d in run.json()["deliveries"]]

    assert listed == {"owner": [delivered.json()["parent_id"]], "intruder": []}
