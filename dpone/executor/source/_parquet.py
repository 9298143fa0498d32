"""Parquet file source: column projection, row-group pruning on the scope field, batch reads.

Row groups whose scope-field statistics lie wholly outside ``[from, to)`` (and hold no nulls) are
skipped; the exact boundary is applied to the batches that are read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dpone.contracts import DponeError
from dpone.contracts.mapping import MappedColumn, PayloadMapping
from dpone.contracts.source_parent import ParentSource
from dpone.executor.source import _failures, _reading
from dpone.executor.source._file import PinnedFile


class ParquetFileReader:
    def __init__(self, path: Path, mapping: PayloadMapping, scope: MappedColumn,
                 from_date: dt.date, to_date: dt.date) -> None:
        self._pinned = PinnedFile(path)
        self._mapping = mapping
        self._scope = scope
        self._from = from_date
        self._to = to_date
        self._columns = list(_reading.source_types(mapping))
        try:
            self._file = pq.ParquetFile(path, memory_map=False)
        except (pa.ArrowInvalid, OSError):
            raise _failures.unreadable("the file is not readable Parquet") from None

    def _keep(self, group: int) -> bool:
        """False only when statistics prove the row group has no row in the boundary."""
        meta = self._file.metadata.row_group(group)
        for index in range(meta.num_columns):
            chunk = meta.column(index)
            if chunk.path_in_schema != self._scope.source_column:
                continue
            stats = chunk.statistics
            if stats is None or not stats.has_min_max or stats.null_count != 0:
                return True
            low, high = stats.min, stats.max
            if type(low) is not dt.date or type(high) is not dt.date:
                return True
            return bool(high >= self._from and low < self._to)
        return True

    def _groups(self) -> list[tuple[int, int]]:
        """The kept row groups with the record number of their first row."""
        kept: list[tuple[int, int]] = []
        first = 1
        for group in range(self._file.metadata.num_row_groups):
            if self._keep(group):
                kept.append((group, first))
            first += self._file.metadata.row_group(group).num_rows
        return kept

    def _read(self, group: int, columns: list[str]) -> Iterator[pa.RecordBatch]:
        batches: Iterator[pa.RecordBatch] = self._file.iter_batches(
            batch_size=_reading.READ_BATCH_ROWS, row_groups=[group], columns=columns,
            use_threads=True)
        return batches

    def batches(self) -> Iterator[tuple[int, pa.RecordBatch]]:
        _reading.require_columns(self._mapping, self._file.schema_arrow.names, "the Parquet file")
        try:
            for group, first in self._groups():
                record = first
                for raw in self._read(group, self._columns):
                    yield record, _reading.mapped_batch(self._mapping, raw)
                    record += raw.num_rows
        except pa.ArrowInvalid:
            raise self._diagnose() from None
        except OSError as exc:
            raise _failures.unavailable("the source file cannot be read",
                                        errno=exc.errno) from None

    def _diagnose(self) -> DponeError:
        """Name the column that failed: re-read the kept row groups one column at a time."""
        for name in self._columns:
            try:
                for group, _first in self._groups():
                    for _ in self._read(group, [name]):
                        pass
            except pa.ArrowInvalid:
                return _reading.blame(_reading.owner(self._mapping, name))
        return _failures.unreadable("the Parquet file cannot be read")

    def version(self) -> ParentSource:
        self._pinned.check_unchanged()
        return ParentSource(type="file", format="parquet", version=self._pinned.digest)

    def close(self) -> None:
        self._file.close()
