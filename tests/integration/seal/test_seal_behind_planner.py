"""Work the sealer does beside the planner: spool files hashed, written and flushed on writer
threads, blocks of row texts encoded two at a time, the parent file hashed while it is planned.
None of it may change a byte, and none of it may publish what it has not checked."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import DponeError
from dpone.contracts.profile import Codec, PayloadFormat
from dpone.executor.seal import _spool, seal_all
from dpone.executor.seal._rowblocks import AHEAD_BLOCKS, RowBlocks
from dpone.executor.source import MappedParent
from support.codec_reference import mapping_of
from support.seal import Sealed

SYNC = "measurements_sync"
BLOCK = 8
MAPPING = mapping_of(("s", "string"))


def _reseal(sealed: Sealed, store: LocalArtifactStore, parent: Any = None) -> Any:
    path = sealed.store.root / sealed.parent.artifact.key
    return seal_all(sealed.plan, sealed.plan_digest, parent or sealed.parent, path, store)


def _payload_files(store: LocalArtifactStore) -> list[Path]:
    root = store.root / "payloads"
    return sorted(path for path in root.rglob("*") if path.is_file()) if root.exists() else []


def test_spools_written_behind_the_planner_seal_the_same_topology(
        tmp_path: Path, sealed_examples: dict[str, Sealed]) -> None:
    sealed = sealed_examples[SYNC]
    store = LocalArtifactStore(tmp_path / "store")
    assert _reseal(sealed, store) == sealed.topology
    assert len(_payload_files(store)) == 2 * len(sealed.topology.children)  # payload + document


def test_a_parent_file_that_does_not_hash_to_its_digest_publishes_nothing(
        tmp_path: Path, sealed_examples: dict[str, Sealed]) -> None:
    """The parent is hashed while the planner reads it; the check still comes before the
    first child is published."""
    sealed = sealed_examples[SYNC]
    claimed = sealed.parent.model_copy(update={"artifact": sealed.parent.artifact.model_copy(
        update={"digest": "sha256:" + "0" * 64})})
    store = LocalArtifactStore(tmp_path / "store")
    with pytest.raises(DponeError) as raised:
        _reseal(sealed, store, claimed)
    assert raised.value.code == "artifacts.unavailable"
    assert "does not hash to the parent digest" in raised.value.message
    assert _payload_files(store) == []


def test_a_spool_that_failed_to_reach_its_file_is_never_published(
        tmp_path: Path, sealed_examples: dict[str, Sealed],
        monkeypatch: pytest.MonkeyPatch) -> None:
    sealed = sealed_examples[SYNC]
    written = _spool.write_spool
    calls: list[str] = []
    failed: list[str] = []

    def failing(path: Path, chunks: Any, size: int) -> str:
        calls.append(path.name)
        if len(calls) == 4:  # the empty payload and the sample come first: a child's spool
            failed.append(hashlib.sha256(b"".join(bytes(chunk) for chunk in chunks)).hexdigest())
            raise OSError(28, "No space left on device", str(path))
        return written(path, chunks, size)

    monkeypatch.setattr(_spool, "write_spool", failing)
    store = LocalArtifactStore(tmp_path / "store")
    with pytest.raises(OSError, match="No space left on device"):
        _reseal(sealed, store)
    published = {path.name.split(".")[0] for path in _payload_files(store)}
    children = {child.payload.digest.removeprefix("sha256:") for child in sealed.topology.children}
    assert failed and failed[0] in children  # a child's payload failed to reach its spool file
    assert failed[0] not in published


def test_a_spool_file_that_took_fewer_bytes_than_measured_fails(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="took 3 of 4 bytes"):
        _spool.write_spool(tmp_path / "a.spool", [b"abc"], 4)


def test_two_blocks_are_encoded_ahead_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks 1 and 2 encode concurrently on threads of their own while the planner reads
    block 0: each waits for the other at a barrier, which only two concurrent encodings pass."""
    assert AHEAD_BLOCKS == 2
    barrier = threading.Barrier(2, timeout=10)
    met: list[int] = []
    texts = RowBlocks._texts

    def meeting(self: RowBlocks, first_row: int, row_count: int) -> Any:
        if first_row in (BLOCK, 2 * BLOCK) and threading.current_thread() is not \
                threading.main_thread():
            barrier.wait()
            met.append(first_row)
        return texts(self, first_row, row_count)

    monkeypatch.setattr(RowBlocks, "_texts", meeting)
    table = pa.table({"s": pa.array([f"v{i}" for i in range(5 * BLOCK)], pa.string())})
    payload = PayloadFormat(format="ndjson", compression="none", content_type="text/plain")
    blocks = RowBlocks(table, MAPPING, payload, Codec(), block_rows=BLOCK)
    first = b"".join(bytes(chunk) for chunk in blocks.payload(0, 3))
    assert first.count(b"\n") == 3
    assert [ahead.index for ahead in blocks._ahead] == [1, 2]
    whole = b"".join(bytes(chunk) for chunk in blocks.payload(0, 5 * BLOCK))
    assert whole.count(b"\n") == 5 * BLOCK
    assert sorted(met) == [BLOCK, 2 * BLOCK]


def _file_resident_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssFile:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no RssFile in /proc/self/status")


def test_sizing_the_blocks_reads_no_page_of_the_mapped_parent(tmp_path: Path) -> None:
    """The block size comes from the table's buffer sizes: ``nbytes`` would read every string
    column's offsets, faulting about a tenth of a memory-mapped parent in at once."""
    rows = 2_000_000
    table = pa.table({"s": pa.array([f"v{i % 97}" for i in range(rows)], pa.large_string())})
    path = tmp_path / "parent.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=65_536)
    mapped = MappedParent(path)
    before = _file_resident_mb()
    payload = PayloadFormat(format="ndjson", compression="none", content_type="text/plain")
    RowBlocks(mapped.table, MAPPING, payload, Codec())
    assert _file_resident_mb() - before < 4  # the offsets alone are 16 MB
    mapped.release()
