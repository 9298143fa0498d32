"""Collect the bounded rows, sort them, and write the parent as one deterministic IPC file.

Peak memory is the parent's columns plus one column while the collected batches are joined, plus
the sort permutation and one output batch: the permutation is applied one record batch at a
time. The file has fixed-size record batches, no compression and the schema metadata the caller
gives, so the same rows always give the same bytes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import ipc

from dpone.contracts import DponeError
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.source_parent import ScopeIndexEntry
from dpone.executor.source import _arrow

PARENT_BATCH_ROWS = 65_536
_HASH_CHUNK = 1 << 20
_WRITE_OPTIONS = ipc.IpcWriteOptions(compression=None, use_threads=False)


@dataclass(frozen=True, slots=True)
class WrittenParent:
    path: Path
    digest: str
    size: int
    row_count: int
    scope_index: tuple[ScopeIndexEntry, ...]


def sort_order(mapping: PayloadMapping, scope_field: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The declared sort keys (scope first) and the full order with the tie-breaking columns."""
    keys = (scope_field, *(key for key in mapping.sort_keys if key != scope_field))
    rest = tuple(column.name for column in mapping.columns if column.name not in keys)
    return keys, keys + rest


def file_chunks(path: Path, size: int = _HASH_CHUNK) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(size):
            yield chunk


def _not_intact(what: str) -> DponeError:
    return DponeError(code="artifacts.unavailable",
                      message=f"the parent file did not read back intact: {what}")


class ParentBuilder:
    """Accumulates mapped, bounded batches column by column, then writes the sorted parent."""

    def __init__(self, mapping: PayloadMapping, scope_field: str, schema: pa.Schema) -> None:
        self._mapping = mapping
        self._scope_field = scope_field
        self._schema = schema
        self._chunks: list[list[pa.Array]] = [[] for _ in mapping.columns]
        self._rows = 0

    def add(self, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        for chunks, array in zip(self._chunks, batch.columns, strict=True):
            chunks.append(array)
        self._rows += batch.num_rows

    def _join(self) -> list[pa.Array]:
        """One contiguous array per column; each column's chunks are released as it is joined."""
        joined: list[pa.Array] = []
        for index, field in enumerate(self._schema):
            chunks, self._chunks[index] = self._chunks[index], []
            joined.append(pa.concat_arrays(chunks) if chunks else pa.array([], type=field.type))
            del chunks
        return joined

    def write(self, path: Path) -> WrittenParent:
        columns = self._join()
        _keys, order = sort_order(self._mapping, self._scope_field)
        types = [column.type for column in self._mapping.columns]
        table = pa.Table.from_arrays(columns, schema=self._schema)
        permutation = pc.sort_indices(
            table, options=pc.SortOptions([(name, "ascending", "at_end") for name in order]))
        with pa.OSFile(str(path), "wb") as sink, \
                ipc.new_file(sink, self._schema, options=_WRITE_OPTIONS) as writer:
            for start in range(0, self._rows, PARENT_BATCH_ROWS):
                part = permutation.slice(start, PARENT_BATCH_ROWS)
                arrays = [_arrow.canonical(column.take(part), kind)
                          for column, kind in zip(columns, types, strict=True)]
                writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=self._schema))
        scope_index = _scope_index(table.column(self._scope_field))
        del table, columns, permutation
        digest = hashlib.sha256()
        size = 0
        for chunk in file_chunks(path):
            digest.update(chunk)
            size += len(chunk)
        written = WrittenParent(path=path, digest="sha256:" + digest.hexdigest(), size=size,
                                row_count=self._rows, scope_index=scope_index)
        _verify(written, self._schema, self._scope_field)
        return written


def _scope_index(scope: pa.ChunkedArray) -> tuple[ScopeIndexEntry, ...]:
    if not len(scope):
        return ()
    counts = pc.value_counts(scope)
    dates: list[dt.date] = counts.field("values").to_pylist()
    tallies: list[int] = counts.field("counts").to_pylist()
    entries: list[ScopeIndexEntry] = []
    first = 0
    for day, count in sorted(zip(dates, tallies, strict=True)):
        entries.append(ScopeIndexEntry(date=day, first_row=first, row_count=count))
        first += count
    return tuple(entries)


def _verify(written: WrittenParent, schema: pa.Schema, scope_field: str) -> None:
    """Re-read the file: schema, batch sizes, row count, scope order and index must hold."""
    with pa.memory_map(str(written.path), "r") as source:
        reader = ipc.open_file(source)
        if not reader.schema.equals(schema, check_metadata=True):
            raise _not_intact("schema")
        expected = iter(written.scope_index)
        entry: ScopeIndexEntry | None = None
        left = 0
        rows = 0
        for index in range(reader.num_record_batches):
            batch = reader.get_batch(index)
            last = index == reader.num_record_batches - 1
            if batch.num_rows == 0 or (not last and batch.num_rows != PARENT_BATCH_ROWS):
                raise _not_intact("record batch sizes")
            for day, count in _runs(batch.column(scope_field)):
                while left == 0:
                    entry = next(expected, None)
                    if entry is None:
                        raise _not_intact("scope order")
                    left = entry.row_count
                if entry is None or day != entry.date or count > left:
                    raise _not_intact("scope order")
                left -= count
            rows += batch.num_rows
        if rows != written.row_count or left or next(expected, None) is not None:
            raise _not_intact("row count")


def _runs(values: pa.Array) -> Sequence[tuple[dt.date, int]]:
    """Consecutive equal values of a sorted date column as ``(date, run length)``."""
    encoded = pc.run_end_encode(values)
    ends: list[int] = encoded.run_ends.to_pylist()
    days: list[dt.date] = encoded.values.to_pylist()
    starts = [0, *ends[:-1]]
    return [(day, end - start) for day, start, end in zip(days, starts, ends, strict=True)]
