"""Write the sorted parent as one deterministic IPC file, hashed as it is written.

The file has record batches of exactly :data:`PARENT_BATCH_ROWS` rows (the last one may be
shorter), no compression and the schema metadata the caller gives; every column is rebuilt from
canonical buffers (:func:`~dpone.executor.source._arrow.canonical`). So its bytes depend only on
the sorted rows, never on how they were handed in: the writer re-cuts whatever slices it gets.
The file is read back batch by batch (not memory-mapped, so the check does not keep the parent's
pages resident) to prove the schema, batch sizes, row count and scope order.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import ipc

from dpone.contracts import DponeError
from dpone.contracts.mapping import ColumnType
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


def file_chunks(path: Path, size: int = _HASH_CHUNK) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(size):
            yield chunk


def scope_index(day_counts: Sequence[tuple[dt.date, int]]) -> tuple[ScopeIndexEntry, ...]:
    """The index of a parent whose days (ascending) hold the given row counts."""
    entries: list[ScopeIndexEntry] = []
    first = 0
    for day, count in day_counts:
        entries.append(ScopeIndexEntry(date=day, first_row=first, row_count=count))
        first += count
    return tuple(entries)


_PENDING_WRITES = 64
"""Buffers handed to the parent file's writing thread and not yet written, at most."""


class _HashingFile:
    """A write-only file object that counts the bytes it is given and hashes and writes them to
    ``path`` on a thread of its own (SHA-256 and file writes release the GIL), so the freeze
    sorts the next rows while the last ones are written. The IPC writer's buffers are copied
    (they are not the file's to keep); at most :data:`_PENDING_WRITES` wait. A write that failed
    is raised again by the next :meth:`write`, :meth:`flush` or :meth:`close`."""

    def __init__(self, path: Path) -> None:
        self._handle = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.hasher = hashlib.sha256()
        self.size = 0
        self.closed = False
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=_PENDING_WRITES)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="dpone-parent-writer",
                                        daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            chunk = self._queue.get()
            try:
                if chunk is None:
                    return
                if self._error is None:
                    self._handle.write(chunk)
                    self.hasher.update(chunk)
            except BaseException as error:  # raised again on the writer's thread
                self._error = error
            finally:
                self._queue.task_done()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def write(self, data: bytes | memoryview) -> int:
        self._raise()
        chunk = bytes(data)
        self._queue.put(chunk)
        self.size += len(chunk)
        return len(chunk)

    def flush(self) -> None:
        self._queue.join()
        self._raise()
        self._handle.flush()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._queue.put(None)
            self._thread.join()
            self._handle.close()
            self._raise()


class ParentWriter:
    """Takes the parent's rows in their final order, in slices of any size, and writes them."""

    def __init__(self, path: Path, schema: pa.Schema, types: Sequence[ColumnType]) -> None:
        self._path = path
        self._schema = schema
        self._types = list(types)
        self._file = _HashingFile(path)
        self._writer = ipc.new_file(self._file, schema, options=_WRITE_OPTIONS)
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self.rows = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self._file.close()
            return
        with contextlib.suppress(Exception):  # the error in flight is the one to report
            self._file.close()

    def room(self) -> int:
        """Rows the current record batch still takes (feed slices of this size to avoid copies)."""
        return PARENT_BATCH_ROWS - self._pending_rows

    def add(self, rows: pa.RecordBatch | pa.Table) -> None:
        """Append ``rows`` (columns in schema order) after everything added so far."""
        offset = 0
        while offset < rows.num_rows:
            part = rows.slice(offset, self.room())
            offset += part.num_rows
            if isinstance(part, pa.Table):
                self._pending.extend(part.to_batches())
            else:
                self._pending.append(part)
            self._pending_rows += part.num_rows
            if self._pending_rows == PARENT_BATCH_ROWS:
                self._flush()

    def _flush(self) -> None:
        if not self._pending_rows:
            return
        arrays: list[pa.Array] = []
        for index, kind in enumerate(self._types):
            chunks = [batch.column(index) for batch in self._pending if batch.num_rows]
            column = chunks[0] if len(chunks) == 1 else pa.concat_arrays(chunks)
            arrays.append(_arrow.canonical(column, kind))
        self._writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=self._schema))
        self.rows += self._pending_rows
        self._pending, self._pending_rows = [], 0

    def finish(self, index: tuple[ScopeIndexEntry, ...], scope_field: str) -> WrittenParent:
        """Write the last batch and the footer, then read the file back to check it."""
        self._flush()
        self._writer.close()
        self._file.close()
        written = WrittenParent(path=self._path, digest="sha256:" + self._file.hasher.hexdigest(),
                                size=self._file.size, row_count=self.rows, scope_index=index)
        _verify(written, self._schema, scope_field)
        return written


def _not_intact(what: str) -> DponeError:
    return DponeError(code="artifacts.unavailable",
                      message=f"the parent file did not read back intact: {what}")


def _verify(written: WrittenParent, schema: pa.Schema, scope_field: str) -> None:
    """Re-read the file: schema, batch sizes, row count, scope order and index must hold."""
    if written.path.stat().st_size != written.size:
        raise _not_intact("file size")
    with pa.OSFile(str(written.path), "r") as source:
        reader = ipc.open_file(source)
        if not reader.schema.equals(schema, check_metadata=True):
            raise _not_intact("schema")
        expected = iter(written.scope_index)
        entry: ScopeIndexEntry | None = None
        left = 0
        rows = 0
        scope = schema.get_field_index(scope_field)
        for index in range(reader.num_record_batches):
            batch = reader.get_batch(index)
            last = index == reader.num_record_batches - 1
            if batch.num_rows == 0 or (not last and batch.num_rows != PARENT_BATCH_ROWS):
                raise _not_intact("record batch sizes")
            for day, count in _runs(batch.column(scope)):
                while left == 0:
                    entry = next(expected, None)
                    if entry is None:
                        raise _not_intact("scope order")
                    left = entry.row_count
                if entry is None or day != entry.date or count > left:
                    raise _not_intact("scope order")
                left -= count
            rows += batch.num_rows
            del batch
        if rows != written.row_count or left or next(expected, None) is not None:
            raise _not_intact("row count")


def _runs(values: pa.Array) -> Sequence[tuple[dt.date, int]]:
    """Consecutive equal values of a sorted date column as ``(date, run length)``."""
    encoded = pc.run_end_encode(values)
    ends: list[int] = encoded.run_ends.to_pylist()
    days: list[dt.date] = encoded.values.to_pylist()
    starts = [0, *ends[:-1]]
    return [(day, end - start) for day, start, end in zip(days, starts, ends, strict=True)]
