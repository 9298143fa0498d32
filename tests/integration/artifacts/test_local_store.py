"""What only the local directory store can show: processes racing, files on disk, no caching."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import DponeError, content_digest
from dpone.contracts.ports import ArtifactRef
from support.artifact_race_worker import write_after_barrier

WRITERS = 8


SAME = b"may-attempt marker " * 512
OWN = [f"intent {index} ".encode() * 512 for index in range(WRITERS)]


@pytest.fixture(scope="module")
def process_race(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[tuple[str, str]]]]:
    """WRITERS processes race twice, each race released by a barrier: first all writing the
    same bytes to ``markers/same``, then each writing its own bytes to ``markers/contested``.
    Returns the store root and, per writer, its two outcomes."""
    root = tmp_path_factory.mktemp("race") / "store"
    context = multiprocessing.get_context("spawn")  # never fork a possibly threaded test process
    start = context.Barrier(WRITERS)
    results = context.Queue()
    processes = [
        context.Process(target=write_after_barrier, args=(
            str(root), [("markers/same", SAME), ("markers/contested", OWN[index])],
            start, results, index))
        for index in range(WRITERS)]
    for process in processes:
        process.start()
    outcomes = dict(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    return root, [outcomes[index] for index in range(WRITERS)]


def test_processes_writing_the_same_bytes_all_succeed(
        process_race: tuple[Path, list[list[tuple[str, str]]]]) -> None:
    root, outcomes = process_race
    assert [writer[0] for writer in outcomes] == [("ref", content_digest(SAME))] * WRITERS
    assert (root / "markers/same").read_bytes() == SAME


def test_processes_writing_other_bytes_have_exactly_one_winner(
        process_race: tuple[Path, list[list[tuple[str, str]]]]) -> None:
    root, outcomes = process_race
    contested = [writer[1] for writer in outcomes]
    winners = [index for index, (kind, _) in enumerate(contested) if kind == "ref"]
    assert len(winners) == 1, contested
    assert sorted(value for kind, value in contested if kind == "error") == [
        "artifact.conflict"] * (WRITERS - 1)
    assert (root / "markers/contested").read_bytes() == OWN[winners[0]]
    assert sorted(path.name for path in (root / "markers").iterdir()) == ["contested", "same"]


def test_artifacts_are_plain_read_only_files_at_their_key(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    store.put_bytes("plans/sha256/abc.json", b"{}")
    path = tmp_path / "store" / "plans" / "sha256" / "abc.json"
    assert path.read_bytes() == b"{}"
    assert path.stat().st_mode & 0o222 == 0


def test_stat_reads_the_file_now_and_caches_nothing(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    ref = store.put_bytes("k", b"original")
    assert store.stat("k") == ref
    path = tmp_path / "k"
    path.chmod(0o640)
    path.write_bytes(b"tampered")  # outside the port: the store must report what is there
    assert store.stat("k") == ArtifactRef(key="k", digest=content_digest(b"tampered"), size=8)
    with pytest.raises(DponeError) as caught:
        store.put_bytes("k", b"original")
    assert caught.value.code == "artifact.conflict"


def test_a_key_cannot_sit_below_or_above_another_key(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    store.put_bytes("a/b", b"leaf")
    with pytest.raises(DponeError) as below:
        store.put_bytes("a/b/c", b"x")
    assert below.value.code == "artifact.conflict"
    assert below.value.details["existing_key"] == "a/b"
    store.put_bytes("d/e/f", b"x")
    with pytest.raises(DponeError) as above:
        store.put_bytes("d/e", b"x")
    assert above.value.code == "artifact.conflict"
    assert store.stat("d/e") is None
    assert store.stat("a/b/c") is None
    assert store.get_bytes("a/b") == b"leaf"


def test_a_failed_stream_leaves_nothing_behind(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)

    def broken() -> Any:
        yield b"first"
        raise RuntimeError("the source failed")

    with pytest.raises(RuntimeError):
        store.put_stream("k", broken())
    assert store.stat("k") is None
    assert os.listdir(tmp_path) == []


def test_an_unwritable_root_is_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    store = LocalArtifactStore(blocker / "store")  # the root's parent is a file
    with pytest.raises(DponeError) as caught:
        store.put_bytes("k", b"x")
    assert caught.value.code == "artifacts.unavailable"
    assert isinstance(caught.value.__cause__, OSError)
    assert store.stat("k") is None


def test_only_missing_directories_of_a_key_are_created(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A key's directories that exist are looked at, not created again (each new one's entry
    is synced in its parent): a child's evidence lands beside its siblings' at one mkdir."""
    store = LocalArtifactStore(tmp_path / "store")
    store.put_bytes("evidence/first/attempt-1/response.json", b"{}")
    created: list[str] = []
    mkdir = os.mkdir

    def counted(path: Any, *args: Any, **kwargs: Any) -> None:
        created.append(Path(path).relative_to(store.root).as_posix())
        mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", counted)
    store.put_bytes("evidence/first/attempt-1/verification.json", b"{}")
    assert created == []
    store.put_bytes("evidence/second/attempt-1/response.json", b"{}")
    assert created == ["evidence/second", "evidence/second/attempt-1"]
    assert store.get_bytes("evidence/second/attempt-1/response.json") == b"{}"
