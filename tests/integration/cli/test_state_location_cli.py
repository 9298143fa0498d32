"""Where a run keeps its state does not depend on the current directory.

Delivering from the registry, then the same boundary from another directory with a relative
``--registry``, opens the same journal and artifact store (the environment file's control
plane, resolved against the registry root): the second run resumes the admitted delivery and
sends nothing again. Each run names the stores it uses on its first line. A journal that is not
the one the artifact store belongs to (a typo, a fresh file) is refused before anything is
frozen, admitted or sent, and is not created.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpone.cli._inputs import open_identified_journal
from dpone.receiver import ReceiverThread
from support.cli import Dpone, posts

ONE_SYNC_CHILD = ("2026-08-01", "2026-08-08")


def _deliver(registry: str, *extra: str) -> list[str]:
    return ["deliver", f"{registry}/workloads/measurements_sync.yaml", "--registry", registry,
            "--interval-start", ONE_SYNC_CHILD[0], "--interval-end", ONE_SYNC_CHILD[1], *extra]


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere"
    path.mkdir()
    return path


def test_the_same_delivery_from_another_directory_opens_the_same_state_and_sends_nothing(
        registry: Path, elsewhere: Path, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    dpone = Dpone(registry, registry / ".dpone")
    monkeypatch.chdir(registry)
    first = dpone(*_deliver("."))
    assert first.code == 0, first.out + first.err
    journal = (registry / ".dpone" / "journal.sqlite3").resolve()
    # Under the current directory the stores line shows paths relative to it.
    assert first.err.splitlines()[0].startswith(
        "stores: journal .dpone/journal.sqlite3, artifacts .dpone/artifacts, plans .dpone ")

    monkeypatch.chdir(elsewhere)
    second = dpone(*_deliver(os.path.relpath(registry, elsewhere)))

    assert second.code == 0, second.out + second.err
    assert second.err.splitlines()[0].startswith(
        f"stores: journal {journal}, ")  # outside the current directory: absolute
    assert "final_succeeded_full_promoted" in second.out
    assert not (elsewhere / ".dpone").exists()
    ledger = receiver.state.ledger.snapshot()
    assert (ledger["mutations_total"], ledger["duplicate_mutations"]) == (1, 0)
    assert posts(receiver) == 1
    # The printed next command works from this directory as printed.
    next_line = next(line for line in second.out.splitlines() if "next: dpone" in line)
    inspected = dpone(*next_line.split("next: dpone ", 1)[1].split())
    assert inspected.code == 0, inspected.out + inspected.err


def test_the_journal_records_the_environment_and_the_store_refuses_another_journal(
        registry: Path, elsewhere: Path, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    dpone = Dpone(registry, registry / ".dpone")
    assert dpone(*_deliver(str(registry))).code == 0
    journal = open_identified_journal(str(registry / ".dpone" / "journal.sqlite3"),
                                      environment_id="local-dev", migrate=False)
    try:
        [environment] = journal.journal_identity().environments
    finally:
        journal.close()
    assert (environment.platform_instance_id, environment.tenant_id,
            environment.environment_id, environment.namespace_revision) == (
        "dpone-local", "examples", "local-dev", 1)

    monkeypatch.chdir(elsewhere)
    refused = dpone(*_deliver(str(registry), "--journal", "typo.sqlite3", "--format", "json"))

    assert refused.code == 2, refused.out + refused.err
    document = refused.json()
    assert document["code"] == "environment.store_journal_mismatch"
    assert "nothing was frozen, admitted or sent" in document["message"]
    assert not (elsewhere / "typo.sqlite3").exists()
    assert posts(receiver) == 1


def test_an_existing_other_journal_is_refused_before_any_request(
        registry: Path, tmp_path: Path, receiver: ReceiverThread) -> None:
    dpone = Dpone(registry, registry / ".dpone")
    assert dpone(*_deliver(str(registry))).code == 0
    other = tmp_path / "other.sqlite3"
    assert dpone(*_deliver(str(registry), "--journal", str(other), "--artifacts",
                           str(tmp_path / "own-artifacts"))).code == 0  # its own store: fine
    assert posts(receiver) == 2  # a second journal with its own store is a new state

    refused = dpone(*_deliver(str(registry), "--journal", str(other)))

    assert refused.code == 2, refused.out + refused.err
    assert "environment.store_journal_mismatch" in refused.err
    assert posts(receiver) == 2
