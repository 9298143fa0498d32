"""Canonical buffers make the IPC bytes depend on values only; conformance refuses loss."""

from __future__ import annotations

import datetime as dt
import io

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyarrow import ipc

from dpone.contracts import DponeError
from dpone.contracts.mapping import ColumnType, MappedColumn
from dpone.executor.source._arrow import ARROW_TYPES, canonical, conform


def _ipc(array: pa.Array) -> bytes:
    schema = pa.schema([pa.field("x", array.type)])
    sink = io.BytesIO()
    with ipc.new_file(sink, schema) as writer:
        writer.write_batch(pa.RecordBatch.from_arrays([array], schema=schema))
    return sink.getvalue()


def _with_garbage(array: pa.Array) -> pa.Array:
    """The same values over buffers with junk under nulls, past the end and in spare bits."""
    buffers = array.buffers()
    noisy = []
    for index, buffer in enumerate(buffers):
        if buffer is None:
            noisy.append(None)
            continue
        raw = bytearray(buffer.to_pybytes())
        if index == 0 and len(array) % 8:
            raw[-1] |= 0xFF ^ ((1 << (len(array) % 8)) - 1)
        noisy.append(pa.py_buffer(bytes(raw) + b"\xa5" * 16))
    return pa.Array.from_buffers(array.type, len(array), noisy, null_count=array.null_count)


def _scribble_under_nulls(values: list[int | None]) -> pa.Array:
    clean = pa.array(values, pa.int64())
    data = bytearray(clean.buffers()[1].to_pybytes())
    for index, value in enumerate(values):
        if value is None:
            data[index * 8:(index + 1) * 8] = b"\x5a" * 8
    return pa.Array.from_buffers(pa.int64(), len(values), [clean.buffers()[0], pa.py_buffer(
        bytes(data))], null_count=clean.null_count)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), min_size=1, max_size=40))
def test_int64_bytes_ignore_what_lies_under_nulls(values: list[int | None]) -> None:
    clean = canonical(pa.array(values, pa.int64()), "int64")
    assert _ipc(canonical(_scribble_under_nulls(values), "int64")) == _ipc(clean)
    assert _ipc(canonical(_with_garbage(pa.array(values, pa.int64())), "int64")) == _ipc(clean)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=6)), min_size=1, max_size=30),
       st.integers(0, 5))
def test_string_bytes_ignore_offsets_and_slices(values: list[str | None], cut: int) -> None:
    array = pa.array(["pad"] * cut + values, pa.large_string()).slice(cut)
    expected = _ipc(canonical(pa.array(values, pa.large_string()), "string"))
    assert _ipc(canonical(array, "string")) == expected
    assert canonical(array, "string").to_pylist() == values


@pytest.mark.parametrize(("kind", "values"), [
    ("bool", [True, None, False, True, None, True, False, False, True]),
    ("float64", [1.5, None, -0.25]),
    ("date", [dt.date(2026, 8, 1), None]),
    ("timestamp", [dt.datetime(2026, 8, 1, tzinfo=dt.UTC), None]),
])
def test_other_types_are_canonical(kind: ColumnType, values: list[object]) -> None:
    array = pa.array(values, ARROW_TYPES[kind])
    assert _ipc(canonical(_with_garbage(array), kind)) == _ipc(canonical(array, kind))
    assert canonical(array.slice(1), kind).to_pylist() == values[1:]


def _column(kind: ColumnType) -> MappedColumn:
    return MappedColumn(name="c", source="src", type=kind)


@pytest.mark.parametrize(("kind", "array"), [
    ("int64", pa.array([1, 2], pa.int32())),
    ("float64", pa.array([1, 2], pa.int64())),
    ("date", pa.array([0], pa.date64())),
    ("timestamp", pa.array([1000], pa.timestamp("ms", "Europe/Moscow"))),
    ("string", pa.array(["a"], pa.string())),
    ("string", pa.array(["a", "b", "a"]).dictionary_encode()),
])
def test_lossless_casts_are_accepted(kind: ColumnType, array: pa.Array) -> None:
    assert conform(array, _column(kind)).type == ARROW_TYPES[kind]


@pytest.mark.parametrize(("kind", "array", "code"), [
    ("int64", pa.array(["1"]), "source.type_mismatch"),
    ("int64", pa.array([1.5]), "source.type_mismatch"),
    ("int64", pa.array([2**64 - 1], pa.uint64()), "source.type_mismatch"),
    ("float64", pa.array([2**60 + 1], pa.int64()), "source.type_mismatch"),
    ("timestamp", pa.array([1], pa.timestamp("us")), "source.type_mismatch"),
    ("date", pa.array([dt.datetime(2026, 8, 1)]), "source.type_mismatch"),
    ("bool", pa.array([1]), "source.type_mismatch"),
    ("string", pa.array([b"\xff"], pa.binary()), "source.invalid_utf8"),
])
def test_lossy_or_foreign_types_are_refused(kind: ColumnType, array: pa.Array, code: str) -> None:
    with pytest.raises(DponeError) as caught:
        conform(array, _column(kind))
    assert caught.value.code == code
    assert caught.value.details == {"column": "c", "source_column": "src"}
