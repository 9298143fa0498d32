"""``seal_boundary``: the one way a boundary becomes a frozen parent and sealed children, used
by the CLI, the test suites and the benchmarks; it sees the store only through its port."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from dpone.artifacts import LocalArtifactStore
from dpone.compiler import compile_workload
from dpone.contracts.ports import ArtifactRef
from dpone.contracts.source_parent import SourceParent
from dpone.executor.seal import seal_boundary
from support.common import EXAMPLES, ROOT
from support.seal import EXAMPLE_NAMES, INTERVAL, Sealed


class StreamOnlyStore:
    """A local store seen through the port without local files, as an S3 store is."""

    def __init__(self, root: Path) -> None:
        self._inner = LocalArtifactStore(root)
        self.streamed: list[str] = []

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef:
        return self._inner.put_bytes(key, data)

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        return self._inner.put_stream(key, chunks)

    def get_bytes(self, key: str) -> bytes:
        return self._inner.get_bytes(key)

    def open_stream(self, key: str, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        self.streamed.append(key)
        return self._inner.open_stream(key, chunk_size)

    def stat(self, key: str) -> ArtifactRef | None:
        return self._inner.stat(key)

    def local_file(self, key: str) -> Path | None:
        return None


def test_a_store_without_local_files_seals_the_same_children_from_a_streamed_parent(
        tmp_path: Path, sealed_examples: dict[str, Sealed]) -> None:
    name = EXAMPLE_NAMES[0]
    compiled = compile_workload(EXAMPLES / "workloads" / f"{name}.yaml", EXAMPLES)
    store = StreamOnlyStore(tmp_path / "artifacts")

    sealed = seal_boundary(compiled.plan, compiled.digest, store, registry_root=EXAMPLES,
                           interval_start=INTERVAL[0], interval_end=INTERVAL[1])

    expected = sealed_examples[name].topology
    assert store.streamed.count(sealed.parent.artifact.key) == 1  # one scratch copy, read once
    assert sealed.topology.parent_plan_digest == expected.parent_plan_digest
    assert [c.payload.digest for c in sealed.topology.children] == [
        c.payload.digest for c in expected.children]


def test_the_parent_is_frozen_and_published_before_any_child_is_sealed(tmp_path: Path) -> None:
    compiled = compile_workload(EXAMPLES / "workloads" / "measurements_sync.yaml", EXAMPLES)
    store = LocalArtifactStore(tmp_path / "artifacts")
    events: list[tuple[str, object]] = []

    def frozen(parent: SourceParent) -> None:
        events.append(("frozen", store.stat(parent.artifact.key)))

    sealed = seal_boundary(compiled.plan, compiled.digest, store, registry_root=EXAMPLES,
                           interval_start=INTERVAL[0], interval_end=INTERVAL[1],
                           on_frozen=frozen,
                           progress=lambda done, total: events.append(("sealed", done)))

    children = len(sealed.topology.children)
    assert events == [("frozen", sealed.parent.artifact),
                      *(("sealed", done) for done in range(1, children + 1))]


def test_the_cli_seals_through_the_port_and_names_no_store_adapter() -> None:
    """The CLI opens a store by URL and hands it to the executor: it never asks which adapter
    it holds (no ``isinstance`` of a store, no adapter class named)."""
    adapters = {"LocalArtifactStore", "S3ArtifactStore"}
    for path in sorted((ROOT / "dpone" / "cli").rglob("*.py")):
        names = {node.id for node in ast.walk(ast.parse(path.read_text("utf-8")))
                 if isinstance(node, ast.Name)}
        names |= {alias.name for node in ast.walk(ast.parse(path.read_text("utf-8")))
                  if isinstance(node, ast.ImportFrom) for alias in node.names}
        assert not names & adapters, f"{path.relative_to(ROOT)} names {sorted(names & adapters)}"
