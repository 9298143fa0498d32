"""The sealer's fast path: row texts encoded once per block and sliced per child, children
published a few at once, request templates parsed once; bytes, errors and order unchanged."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpone.codecs._columns as columns_module
from dpone.artifacts import LocalArtifactStore
from dpone.codecs import PayloadEncodingError, encode_rows
from dpone.compiler import compile_workload
from dpone.contracts import DponeError, content_digest
from dpone.contracts.ports import ArtifactRef
from dpone.contracts.profile import Codec, CsvCodec, JsonCodec, PayloadFormat
from dpone.executor.seal import _request, _seal, seal_boundary
from dpone.executor.seal._payload import PayloadEncoder
from dpone.executor.seal._rowblocks import BLOCK_ARROW_BYTES, BLOCK_ROWS, RowBlocks
from support.codec_reference import mapping_of, table_of, tables
from support.common import EXAMPLES
from support.seal import INTERVAL, Sealed

FORMATS = ("csv", "ndjson", "json_array")
SYNC = "measurements_sync"


def _payload(fmt: str, compression: str = "none") -> PayloadFormat:
    return PayloadFormat(format=fmt, compression=compression,  # type: ignore[arg-type]
                         content_type="text/plain")


def _direct(table: pa.Table, mapping: Any, payload: PayloadFormat, codec: Codec,
            first: int, count: int) -> bytes:
    return b"".join(encode_rows(table.slice(first, count), mapping, payload, codec))


def _sliced(blocks: RowBlocks, first: int, count: int) -> bytes:
    return b"".join(bytes(chunk) for chunk in blocks.payload(first, count))


@settings(max_examples=120, deadline=None)
@given(tables(max_rows=30), st.sampled_from(FORMATS), st.integers(1, 7),
       st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=8),
       st.sampled_from([JsonCodec(), JsonCodec(null="omit", non_ascii="escape")]))
def test_any_interval_sliced_from_blocks_is_the_direct_encoding(
        table: tuple[Any, list[list[Any]]], fmt: str, block_rows: int,
        intervals: list[tuple[int, int]], json_codec: JsonCodec) -> None:
    mapping, rows = table
    codec = Codec(json=json_codec, csv=CsvCodec(null="NULL"))
    arrow = table_of(mapping, rows)
    blocks = RowBlocks(arrow, mapping, _payload(fmt), codec, block_rows=block_rows)
    for start, length in intervals:  # in any order, as the planner probes and backs off
        first = min(start, len(rows))
        count = min(length, len(rows) - first)
        assert _sliced(blocks, first, count) == _direct(arrow, mapping, _payload(fmt), codec,
                                                        first, count)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_the_encoder_seals_the_same_bytes_as_the_codec(fmt: str, compression: str) -> None:
    mapping = mapping_of(("s", "string"), ("n", "int64"), ("f", "float64"))
    rows = [[f"строка {i} \"q\" \\", i * 7 - 50, i / 3 if i % 5 else None] for i in range(300)]
    arrow = table_of(mapping, rows)
    payload = _payload(fmt, compression)
    encoder = PayloadEncoder(arrow, mapping, payload, Codec())
    for first, count in [(0, 300), (0, 0), (17, 130), (250, 50), (299, 1), (17, 129)]:
        chunks, decoded_size = encoder.sealed_chunks(first, count)
        sealed = b"".join(bytes(chunk) for chunk in chunks)
        decoded = _direct(arrow, mapping, _payload(fmt), Codec(), first, count)
        assert (gzip.decompress(sealed) if compression == "gzip" else sealed) == decoded
        assert decoded_size == len(decoded)
        assert all(len(chunk) for chunk in chunks)


def test_a_refused_value_raises_what_the_direct_path_raises_and_spares_other_rows() -> None:
    mapping = mapping_of(("s", "string", False), ("f", "float64"))
    values = [f"v{i}" for i in range(12)]
    floats: list[float | None] = [float(i) for i in range(12)]
    values[8] = None  # type: ignore[call-overload]  # a null in a column declared not nullable
    floats[9] = float("nan")
    arrow = pa.table({"s": pa.array(values, pa.string()), "f": pa.array(floats, pa.float64())})
    for fmt in FORMATS:
        blocks = RowBlocks(arrow, mapping, _payload(fmt), Codec(), block_rows=4)
        for first, count in [(0, 8), (4, 4), (10, 2), (6, 6), (8, 4), (9, 3), (0, 12)]:
            try:
                expected: bytes | tuple[Any, ...] = _direct(arrow, mapping, _payload(fmt), Codec(),
                                                           first, count)
            except PayloadEncodingError as error:
                expected = (error.reason, error.column, error.row)
            try:
                got: bytes | tuple[Any, ...] = _sliced(blocks, first, count)
            except PayloadEncodingError as error:
                got = (error.reason, error.column, error.row)
            assert got == expected, (fmt, first, count)


def test_sealing_formats_every_parent_row_once(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    formatted = [0]
    checked = columns_module._checked

    def counting(piece: Any, mapping: Any) -> Any:
        formatted[0] += piece.batch.num_rows
        return checked(piece, mapping)

    monkeypatch.setattr(columns_module, "_checked", counting)
    compiled = compile_workload(EXAMPLES / "workloads" / f"{SYNC}.yaml", EXAMPLES)
    sealed = seal_boundary(compiled.plan, compiled.digest, LocalArtifactStore(tmp_path),
                           registry_root=EXAMPLES, interval_start=INTERVAL[0],
                           interval_end=INTERVAL[1])
    assert len(sealed.topology.children) > 3
    # The planner's calibration sample and every child are sliced out of one encoding.
    assert formatted[0] == sealed.parent.row_count


def test_request_templates_are_parsed_once_per_text_not_per_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    parse = _request.parse_template

    def counting(text: str, **options: Any) -> Any:
        parsed.append(text)
        return parse(text, **options)

    monkeypatch.setattr(_request, "parse_template", counting)
    _request._template.cache_clear()
    compiled = compile_workload(EXAMPLES / "workloads" / f"{SYNC}.yaml", EXAMPLES)
    sealed = seal_boundary(compiled.plan, compiled.digest, LocalArtifactStore(tmp_path),
                           registry_root=EXAMPLES, interval_start=INTERVAL[0],
                           interval_end=INTERVAL[1])
    assert len(sealed.topology.children) > 3
    assert len(parsed) == len(set(parsed)) <= 4


class _Store:
    """A local store whose payload writes can wait for each other or fail by key."""

    def __init__(self, root: Path, *, meet: bool = False, failing: Iterable[str] = ()) -> None:
        self._inner = LocalArtifactStore(root)
        self._meet = meet
        self._failing = set(failing)
        self._lock = threading.Lock()
        self._active = 0
        self._first_waited = False
        self.met = threading.Event()  # set once two payload writes were in progress together

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef:
        return self._inner.put_bytes(key, data)

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        if key in self._failing:
            raise DponeError(code="artifacts.unavailable", message=f"refused {key}",
                             details={"key": key})
        if not self._meet:
            return self._inner.put_stream(key, chunks)
        with self._lock:
            self._active += 1
            if self._active >= 2:
                self.met.set()
            first, self._first_waited = not self._first_waited, True
        try:
            if first:  # the first write waits for a second one (one by one, it never comes)
                self.met.wait(timeout=10)
            return self._inner.put_stream(key, chunks)
        finally:
            with self._lock:
                self._active -= 1

    def get_bytes(self, key: str) -> bytes:
        return self._inner.get_bytes(key)

    def open_stream(self, key: str, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        return self._inner.open_stream(key, chunk_size)

    def stat(self, key: str) -> ArtifactRef | None:
        return self._inner.stat(key)

    def local_file(self, key: str) -> Path | None:
        return self._inner.local_file(key)


def _seal_into(store: Any, progress: Any = None) -> Any:
    compiled = compile_workload(EXAMPLES / "workloads" / f"{SYNC}.yaml", EXAMPLES)
    return seal_boundary(compiled.plan, compiled.digest, store, registry_root=EXAMPLES,
                         interval_start=INTERVAL[0], interval_end=INTERVAL[1], progress=progress)


def test_children_are_published_several_at_once_in_child_order(
        tmp_path: Path, sealed_examples: dict[str, Sealed]) -> None:
    progress: list[tuple[int, int]] = []
    store = _Store(tmp_path, meet=True)
    sealed = _seal_into(store, lambda done, total: progress.append((done, total)))
    assert store.met.is_set()
    expected = sealed_examples[SYNC].topology
    assert sealed.topology == expected
    total = len(expected.children)
    assert progress == [(done, total) for done in range(1, total + 1)]


def test_one_at_a_time_seals_the_same_topology(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               sealed_examples: dict[str, Sealed]) -> None:
    monkeypatch.setattr(_seal, "PUBLISH_THREADS", 1)
    assert _seal_into(LocalArtifactStore(tmp_path)).topology == sealed_examples[SYNC].topology


def test_the_first_failing_child_in_order_is_reported(tmp_path: Path,
                                                      sealed_examples: dict[str, Sealed]) -> None:
    children = sealed_examples[SYNC].topology.children
    second, fourth = children[1].payload.key, children[3].payload.key
    with pytest.raises(DponeError) as raised:
        _seal_into(_Store(tmp_path, failing=(fourth, second)))
    assert raised.value.details["key"] == second


def test_blocks_of_wide_rows_hold_fewer_rows() -> None:
    mapping = mapping_of(("s", "string"))
    wide = pa.table({"s": pa.array(["x" * 20_000] * 1_000, pa.large_string())})
    narrow = pa.table({"s": pa.array(["x"] * 1_000, pa.large_string())})
    payload = _payload("ndjson")
    assert RowBlocks(narrow, mapping, payload, Codec())._block_rows == BLOCK_ROWS
    rows = RowBlocks(wide, mapping, payload, Codec())._block_rows
    assert 1 <= rows < BLOCK_ROWS
    assert rows * wide.nbytes // wide.num_rows <= BLOCK_ARROW_BYTES
    blocks = RowBlocks(wide, mapping, payload, Codec())
    assert _sliced(blocks, 300, 500) == _direct(wide, mapping, payload, Codec(), 300, 500)


class _Adopting(LocalArtifactStore):
    """The local store, counting how each payload reached it."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.adopted: list[str] = []
        self.streamed: list[str] = []

    def adopt_file(self, key: str, source: Path, digest: str, size: int) -> ArtifactRef:
        self.adopted.append(key)
        return super().adopt_file(key, source, digest, size)

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        self.streamed.append(key)
        return super().put_stream(key, chunks)


def test_a_local_store_adopts_each_spooled_payload_as_written(
        tmp_path: Path, sealed_examples: dict[str, Sealed]) -> None:
    """Each payload is written once, to its spool file, and the store links that file: no
    copy, no second hash; the topology is the one a streaming store gets."""
    store = _Adopting(tmp_path / "store")
    sealed = _seal_into(store)
    payloads = [child.payload.key for child in sealed.topology.children]
    assert sorted(key for key in store.adopted if key.startswith("payloads/")) == sorted(payloads)
    assert not [key for key in store.streamed if key in payloads]
    assert sealed.topology == sealed_examples[SYNC].topology
    for child in sealed.topology.children:
        assert content_digest(store.get_bytes(child.payload.key)) == child.payload.digest
