"""The places of every child's first MAY_ATTEMPT marker and submit evidence are made at once
before the first submit (a local store's directories, each parent synced once), so a child's
two writes sync only the directories they link into."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from dpone.artifacts import LocalArtifactStore, _local
from dpone.contracts import DponeError
from dpone.contracts.journal import may_attempt_marker_key
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted
from support.supervisor import Supervised, reply

Make = Callable[..., Supervised]


def _recorded(monkeypatch: pytest.MonkeyPatch) -> tuple[list[list[str]], list[str]]:
    """The key lists passed to ``prepare_keys`` and every directory synced from now on (relative
    paths below the store's ``artifacts`` root; ``<prepared>`` where a prepare returned)."""
    prepared: list[list[str]] = []
    synced: list[str] = []
    prepare, fsync_directory = LocalArtifactStore.prepare_keys, _local._fsync_directory

    def recording(store: LocalArtifactStore, keys: Iterable[str]) -> None:
        prepared.append(list(keys))
        prepare(store, prepared[-1])
        synced.append("<prepared>")

    def counted(directory: Path) -> None:
        synced.append(directory.as_posix().split("/artifacts/", 1)[-1])
        fsync_directory(directory)

    monkeypatch.setattr(LocalArtifactStore, "prepare_keys", recording)
    monkeypatch.setattr(_local, "_fsync_directory", counted)
    return prepared, synced


def test_every_childs_marker_and_evidence_places_are_made_before_the_first_submit(
        supervised: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    s = supervised("sync")
    prepared, synced = _recorded(monkeypatch)

    result = s.run()

    assert isinstance(result, DeliveryCompleted), result
    namespace = s.plan.environment.operation_namespace
    children = s.children()
    assert prepared == [[key for child in children for key in (
        may_attempt_marker_key(namespace, child.operation_id, 1),
        f"evidence/{child.operation_id}/attempt-1/submit-response.json")]]
    # The prepare synced the parents of the new directories; after it, each child's marker and
    # evidence writes synced only the directory each links into.
    after = synced[synced.index("<prepared>") + 1:]
    assert sorted(d for d in after if d.startswith(("markers", "evidence"))) == sorted(
        directory for child in children for directory in (
            f"markers/{namespace.removeprefix('sha256:')}/{child.operation_id}",
            f"evidence/{child.operation_id}/attempt-1"))


def test_a_failed_prepare_leaves_each_write_to_make_its_own_place(
        supervised: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    s = supervised("sync")

    def unavailable(store: LocalArtifactStore, keys: Iterable[str]) -> None:
        raise DponeError(code="artifacts.unavailable", message="the disk is busy")

    monkeypatch.setattr(LocalArtifactStore, "prepare_keys", unavailable)
    result = s.run()

    assert isinstance(result, DeliveryCompleted), result
    assert s.evidence(1, "submit-response")["outcome"] == "sync_success"


def test_a_resumed_run_prepares_the_next_attempt_of_each_child_it_submits(
        supervised: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child the first run left in RETRY_WAIT (a credential refused before any effect) gets
    its second attempt's places; the untouched children their first."""
    s = supervised("sync")
    s.receiver.submits = [reply(401)]
    assert isinstance(s.run(), DeliveryBlocked)
    prepared, _ = _recorded(monkeypatch)

    s.receiver.submits = []
    result = s.run()

    assert isinstance(result, DeliveryCompleted), result
    namespace = s.plan.environment.operation_namespace
    first, *rest = s.children()
    assert prepared == [[key for child, attempt in ((first, 2), *((c, 1) for c in rest))
                         for key in (
        may_attempt_marker_key(namespace, child.operation_id, attempt),
        f"evidence/{child.operation_id}/attempt-{attempt}/submit-response.json")]]
    assert first.attempt_ordinal == 2
