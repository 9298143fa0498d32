"""The sealer encodes the next blocks of parent rows ahead, on background threads, while the
planner consumes the current one: every block is still encoded once, the bytes are those of the
direct encoding, and a value the codec refuses surfaces exactly as before."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from dpone.codecs import PayloadEncodingError, encode_rows
from dpone.contracts import DponeError
from dpone.contracts.profile import Codec, PayloadFormat
from dpone.executor.seal._payload import PayloadEncoder
from dpone.executor.seal._rowblocks import BLOCK_ROWS, KEPT_BLOCKS, RowBlocks
from support.codec_reference import mapping_of

FORMATS = ("csv", "ndjson", "json_array")
ROWS = 44
BLOCK = 8
MAPPING = mapping_of(("s", "string", False), ("f", "float64"))


def _payload(fmt: str) -> PayloadFormat:
    return PayloadFormat(format=fmt, compression="none",  # type: ignore[arg-type]
                         content_type="text/plain")


def _table(refused: bool = False) -> pa.Table:
    values: list[str | None] = [f"v{i} \"q\" ü" for i in range(ROWS)]
    floats: list[float | None] = [i / 4 if i % 3 else None for i in range(ROWS)]
    if refused:
        floats[21] = float("nan")  # third block: encoded ahead while the planner is in the second
        values[35] = None  # a null in a column declared not nullable, in the fifth block
    return pa.table({"s": pa.array(values, pa.string()), "f": pa.array(floats, pa.float64())})


def _walk() -> Iterator[tuple[int, int]]:
    """Intervals the way the planner asks for them: forward, a probe and then a shorter one."""
    for first in range(0, ROWS, 4):
        yield first, min(7, ROWS - first)
        yield first, min(4, ROWS - first)


def _outcome(chunks: Any) -> bytes | tuple[Any, ...]:
    try:
        return b"".join(bytes(chunk) for chunk in chunks)
    except PayloadEncodingError as error:
        return (error.reason, error.column, error.row)


def _direct(table: pa.Table, fmt: str, first: int, count: int) -> bytes | tuple[Any, ...]:
    return _outcome(encode_rows(table.slice(first, count), MAPPING, _payload(fmt), Codec()))


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, bool]]:
    """Every encoding of parent rows: (first row, rows, on the planner's thread)."""
    seen: list[tuple[int, int, bool]] = []
    texts = RowBlocks._texts

    def counting(self: RowBlocks, first_row: int, row_count: int) -> Any:
        seen.append((first_row, row_count, threading.current_thread() is threading.main_thread()))
        return texts(self, first_row, row_count)

    monkeypatch.setattr(RowBlocks, "_texts", counting)
    return seen


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_next_block_is_encoded_ahead_once_and_the_bytes_are_unchanged(
        fmt: str, encodes: list[tuple[int, int, bool]]) -> None:
    table = _table()
    blocks = RowBlocks(table, MAPPING, _payload(fmt), Codec(), block_rows=BLOCK)
    for first, count in _walk():
        assert _outcome(blocks.payload(first, count)) == _direct(table, fmt, first, count)
        assert len(blocks._kept) <= KEPT_BLOCKS
    starts = range(0, ROWS, BLOCK)
    # The first block on the planner's thread, every later one ahead of it; none twice.
    assert sorted(encodes) == [(start, min(BLOCK, ROWS - start), start == 0) for start in starts]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_refused_value_in_a_block_encoded_ahead_surfaces_as_before(
        fmt: str, encodes: list[tuple[int, int, bool]]) -> None:
    table = _table(refused=True)
    blocks = RowBlocks(table, MAPPING, _payload(fmt), Codec(), block_rows=BLOCK)
    refused = 0
    for first, count in _walk():
        expected = _direct(table, fmt, first, count)
        assert _outcome(blocks.payload(first, count)) == expected, (first, count)
        refused += isinstance(expected, tuple)
    assert refused > 0
    assert (16, BLOCK, False) in encodes and (32, BLOCK, False) in encodes  # both ahead


def test_the_sealer_reports_a_refused_value_of_a_block_encoded_ahead_by_column_and_row(
        encodes: list[tuple[int, int, bool]]) -> None:
    rows = 2 * BLOCK_ROWS + 100
    floats = [float(row) for row in range(rows)]
    floats[BLOCK_ROWS + 5] = float("nan")
    table = pa.table({"s": pa.array(["v"] * rows, pa.string()),
                      "f": pa.array(floats, pa.float64())})
    encoder = PayloadEncoder(table, MAPPING, _payload("ndjson"), Codec())
    encoder.sealed_chunks(0, 1_000)  # the first block; the next ones are encoded ahead
    with pytest.raises(DponeError) as raised:
        encoder.sealed_chunks(BLOCK_ROWS - 10, 20)
    assert raised.value.code == "source.type_mismatch"
    assert raised.value.details == {"column": "f", "row": 15}
    assert (BLOCK_ROWS, BLOCK_ROWS, False) in encodes


def test_a_failure_while_encoding_ahead_raises_where_the_block_is_needed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    texts = RowBlocks._texts

    def failing(self: RowBlocks, first_row: int, row_count: int) -> Any:
        if first_row == 16:
            raise RuntimeError("the codec failed")
        return texts(self, first_row, row_count)

    monkeypatch.setattr(RowBlocks, "_texts", failing)
    table = _table()
    blocks = RowBlocks(table, MAPPING, _payload("csv"), Codec(), block_rows=BLOCK)
    assert _outcome(blocks.payload(8, 8)) == _direct(table, "csv", 8, 8)  # third block ahead
    assert _outcome(blocks.payload(10, 6)) == _direct(table, "csv", 10, 6)
    with pytest.raises(RuntimeError, match="the codec failed"):
        _outcome(blocks.payload(12, 6))
