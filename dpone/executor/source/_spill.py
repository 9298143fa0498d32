"""The freeze's spill file: bounded rows in input order, grouped by scope day, on scratch disk.

Rows arrive in chunks of about the memory budget. Each chunk is put in scope-day order with a
stable sort (rows of one day keep their input order; a chunk already in day order is written as
it is) and appended to one Arrow IPC file as record batches that never span two days. The index
says which batches hold which day, chunk after chunk, so the rows of any run of days can be read
back in input order, batch by batch, with positional reads: nothing is memory-mapped, so reading
the spill back does not leave its pages in the process's resident memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import ipc

SPILL_BATCH_ROWS = 32_768
_WRITE_OPTIONS = ipc.IpcWriteOptions(compression=None, use_threads=False)


@dataclass(frozen=True, slots=True)
class SpillBatch:
    """One record batch of the spill: its position in the file, its day and its rows."""

    index: int
    day: int  # days since 1970-01-01, as Arrow's date32 stores them
    rows: int


def day_runs(scope: pa.Array) -> list[tuple[int, int]]:
    """``(day, rows)`` for each run of equal days in a date32 column."""
    if not len(scope):
        return []
    encoded = pc.run_end_encode(scope.cast(pa.int32()))
    ends: list[int] = encoded.run_ends.to_pylist()
    days: list[int] = encoded.values.to_pylist()
    starts = [0, *ends[:-1]]
    return [(day, end - start) for day, start, end in zip(days, starts, ends, strict=True)]


def in_day_order(table: pa.Table, scope_field: str) -> pa.Table:
    """``table`` with its rows stably sorted by the scope day (unchanged when already so)."""
    days = table.column(scope_field).cast(pa.int32())
    if len(days) < 2 or pc.all(pc.greater_equal(days[1:], days[:-1])).as_py():
        return table
    return table.take(pc.sort_indices(days))


class Spill:
    """Writes chunks of bounded rows to ``path``; after :meth:`close`, reads them back."""

    def __init__(self, path: Path, schema: pa.Schema, scope_field: str) -> None:
        self._path = path
        self._schema = schema.remove_metadata()
        self._scope_field = scope_field
        self._sink = pa.OSFile(str(path), "wb")
        self._writer: ipc.RecordBatchFileWriter | None = ipc.new_file(
            self._sink, self._schema, options=_WRITE_OPTIONS)
        self._reader: ipc.RecordBatchFileReader | None = None
        self._source: pa.NativeFile | None = None
        self.batches: list[SpillBatch] = []
        self.schema = self._schema
        self.rows = 0
        self.nbytes = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._sink.close()
        if self._source is not None:
            self._source.close()

    def add_chunk(self, batches: Iterable[pa.RecordBatch]) -> None:
        """Append one chunk: its rows in day order, in batches of up to :data:`SPILL_BATCH_ROWS`
        rows of one day each (copied one batch at a time from the reader's smaller batches)."""
        if self._writer is None:
            raise RuntimeError("the spill is closed for writing")
        table = in_day_order(pa.Table.from_batches(list(batches), schema=self._schema),
                             self._scope_field)
        first = 0
        for day, rows in day_runs(table.column(self._scope_field).combine_chunks()):
            for start in range(first, first + rows, SPILL_BATCH_ROWS):
                size = min(SPILL_BATCH_ROWS, first + rows - start)
                part = table.slice(start, size).combine_chunks().to_batches()[0]
                self._writer.write_batch(part)
                self.batches.append(SpillBatch(len(self.batches), day, size))
            first += rows
        self.rows += table.num_rows
        self.nbytes += table.nbytes

    def close(self) -> None:
        """Finish the file; from now on it is only read."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._sink.close()

    def read(self, batches: Iterable[SpillBatch]) -> Iterator[pa.RecordBatch]:
        """The given batches of the closed spill, in the order given, each read when needed."""
        if self._reader is None:
            self._source = pa.OSFile(str(self._path), "r")
            self._reader = ipc.open_file(self._source)
        for batch in batches:
            yield self._reader.get_batch(batch.index)
