"""Publishing the parent: a local store adopts the file the freeze wrote and hashed (one hash,
no copy); any other store receives the same bytes as a stream."""

from __future__ import annotations

import stat
from collections.abc import Iterable
from pathlib import Path

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import content_digest
from dpone.contracts.ports import ArtifactRef
from dpone.contracts.source_parent import SourceParent
from dpone.executor.source import freeze_source
from support.common import EXAMPLES
from support.source import WEEK, MemoryArtifactStore, example_plan


class _RecordingLocalStore(LocalArtifactStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.streamed: list[str] = []

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        self.streamed.append(key)
        return super().put_stream(key, chunks)


def _freeze(store: LocalArtifactStore | MemoryArtifactStore, scratch: Path) -> SourceParent:
    scratch.mkdir(parents=True, exist_ok=True)
    return freeze_source(example_plan(), registry_root=EXAMPLES, interval_start=WEEK[0],
                         interval_end=WEEK[1], artifacts=store, scratch_dir=scratch)


def test_a_local_store_adopts_the_parent_without_copying_it(tmp_path: Path) -> None:
    store = _RecordingLocalStore(tmp_path / "artifacts")
    parent = _freeze(store, tmp_path / "scratch")
    assert parent.artifact.key not in store.streamed  # never copied (nor hashed) a second time
    published = store.local_file(parent.artifact.key)
    assert published is not None
    data = published.read_bytes()
    assert content_digest(data) == parent.artifact.digest and len(data) == parent.artifact.size
    assert stat.S_IMODE(published.stat().st_mode) == 0o440
    assert list((tmp_path / "scratch").iterdir()) == []  # the scratch name is gone


def test_a_store_without_local_files_gets_the_same_parent_bytes(tmp_path: Path) -> None:
    local = LocalArtifactStore(tmp_path / "artifacts")
    memory = MemoryArtifactStore()
    adopted = _freeze(local, tmp_path / "scratch")
    streamed = _freeze(memory, tmp_path / "scratch")
    assert adopted == streamed
    assert memory.get_bytes(streamed.artifact.key) == local.get_bytes(adopted.artifact.key)


def test_freezing_again_into_the_same_store_is_a_no_op(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "artifacts")
    first = _freeze(store, tmp_path / "scratch")
    assert _freeze(store, tmp_path / "scratch") == first
