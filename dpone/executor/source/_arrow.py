"""Arrow types of the parent, conformance of source columns, and canonical buffers.

The parent's bytes must depend only on its logical content: the same mapped rows give the same
IPC file whichever reader produced them. The IPC writer copies buffers as they are, including
bytes under null slots, bits past the end of a bitmap and capacity padding, so every column is
rebuilt from exact-size buffers with zeros under nulls before it is written.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from dpone._allocator import JEMALLOC_DECAY_MS
from dpone.contracts.mapping import ColumnType, MappedColumn, PayloadMapping
from dpone.executor.source import _failures


@functools.cache
def bounded_memory_pool() -> str:
    """Allocate Arrow memory from jemalloc when this pyarrow has it, unless
    ``ARROW_DEFAULT_MEMORY_POOL`` names a pool: freezing and sealing allocate and free blocks of
    the same few sizes over and over, and jemalloc hands freed pages back to the system sooner
    than mimalloc (pyarrow's default), which keeps the process's peak memory about 40 MB lower at
    2M rows; freed pages go back after
    :data:`~dpone._allocator.JEMALLOC_DECAY_MS` (a console script's process starts
    jemalloc with :data:`~dpone._allocator.JEMALLOC_OPTIONS`). Buffers already allocated
    keep their pool. Returns the pool's backend name."""
    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        # A pyarrow built without jemalloc keeps its default pool.
        with contextlib.suppress(NotImplementedError):
            pa.set_memory_pool(pa.jemalloc_memory_pool())
            pa.jemalloc_set_decay_ms(JEMALLOC_DECAY_MS)
    return str(pa.default_memory_pool().backend_name)


ARROW_TYPES: Mapping[ColumnType, pa.DataType] = {
    "string": pa.large_string(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}

_ZERO: Mapping[ColumnType, object] = {
    "string": "",
    "int64": 0,
    "float64": 0.0,
    "bool": False,
    "date": dt.date(1970, 1, 1),
    "timestamp": dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
}


def parent_schema(mapping: PayloadMapping, metadata: Mapping[str, str]) -> pa.Schema:
    """The parent's Arrow schema: mapped names and types in mapping order."""
    fields = [pa.field(c.name, ARROW_TYPES[c.type], nullable=c.nullable) for c in mapping.columns]
    return pa.schema(fields, metadata={k.encode(): v.encode() for k, v in metadata.items()})


def _refusal(target: ColumnType, source: pa.DataType) -> str | None:
    """Why a source Arrow type cannot carry a mapped type, or None when a safe cast can."""
    if pa.types.is_dictionary(source):
        source = source.value_type
    accepted = {
        "string": pa.types.is_string(source) or pa.types.is_large_string(source)
        or pa.types.is_string_view(source) or pa.types.is_binary(source)
        or pa.types.is_large_binary(source) or pa.types.is_binary_view(source),
        "int64": pa.types.is_integer(source),
        "float64": pa.types.is_integer(source) or pa.types.is_floating(source),
        "bool": pa.types.is_boolean(source),
        "date": pa.types.is_date(source),
        "timestamp": pa.types.is_timestamp(source) and source.tz is not None,
    }[target]
    if accepted:
        return None
    if target == "timestamp" and pa.types.is_timestamp(source):
        return "timestamp without time zone; the mapping needs an instant (give a zone or offset)"
    return f"source type {source} cannot hold mapped type {target}"


def conform(array: pa.Array | pa.ChunkedArray, column: MappedColumn) -> pa.Array:
    """Cast one source column to its mapped Arrow type, refusing anything lossy."""
    target = ARROW_TYPES[column.type]
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.type == target:
        return array
    reason = _refusal(column.type, array.type)
    if reason is not None:
        raise _failures.type_mismatch(column.name, column.source_column, reason)
    try:
        return pc.cast(array, target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        if column.type == "string":
            raise _failures.invalid_utf8(column.name, column.source_column) from exc
        raise _failures.type_mismatch(column.name, column.source_column,
                                      f"a value does not fit {column.type}") from exc


def _bitmap(buffer: pa.Buffer, length: int) -> pa.Buffer:
    """An exact-size copy of a bitmap at offset 0 with the bits past ``length`` cleared."""
    size = (length + 7) // 8
    raw = bytearray(buffer.slice(0, size).to_pybytes()) if size else bytearray()
    if length % 8:
        raw[-1] &= (1 << (length % 8)) - 1
    return pa.py_buffer(bytes(raw))


def canonical(array: pa.Array, column_type: ColumnType) -> pa.Array:
    """The same values rebuilt from exact-size buffers with zeros under null slots."""
    length = len(array)
    if length == 0:
        return pa.array([], type=array.type)
    if array.offset:
        array = pa.concat_arrays([array])
    null_count = array.null_count
    validity: pa.Buffer | None = None
    if null_count:
        validity = _bitmap(pc.is_valid(array).buffers()[1], length)
        array = pc.fill_null(array, pa.scalar(_ZERO[column_type], type=array.type))
        if array.offset:
            array = pa.concat_arrays([array])
    buffers = array.buffers()
    data: list[pa.Buffer]
    if column_type == "bool":
        data = [_bitmap(buffers[1], length)]
    elif column_type == "string":
        if memoryview(buffers[1].slice(0, 8)).cast("q")[0] != 0:
            buffers = pa.concat_arrays([array]).buffers()  # concatenation rebases offsets to 0
        offsets = buffers[1].slice(0, (length + 1) * 8)
        bounds = memoryview(offsets).cast("q")
        values = buffers[2].slice(0, bounds[length]) if buffers[2] is not None else pa.py_buffer(b"")
        data = [offsets, values]
    else:
        width = array.type.bit_width // 8
        data = [buffers[1].slice(0, length * width)]
    return pa.Array.from_buffers(array.type, length, [validity, *data], null_count=null_count)
