"""Sort the bounded rows into the parent in bounded memory.

The parent's order is the scope day, the declared sort keys, then every other column, nulls
last; rows that tie on all of them keep their input order (a stable sort). Rows are collected
up to ``memory_budget`` bytes of Arrow data. When all of them fit, they are sorted in memory.
Otherwise each full chunk goes to a spill file on scratch disk in day order
(:class:`~dpone.executor.source._spill.Spill`) and the parent is written group by group: runs
of whole days that fit the budget together are read back (input order kept), sorted and
appended; a day bigger than the budget is split into ordered buckets first
(:mod:`~dpone.executor.source._split`). The next group is read back and sorted on a thread of
its own while the last one is appended. Each group holds whole days and is an interval of the
parent's order, so the parent has the same bytes whatever the budget, the chunking of the input
or the number of threads: only the peak memory changes, about four times the budget (two groups,
each with its sorted slices) plus one record batch, and a bucket of rows that are all equal to
each other.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import pyarrow as pa
import pyarrow.compute as pc

from dpone.contracts.mapping import PayloadMapping
from dpone.executor.source import _split
from dpone.executor.source._ahead import read_ahead
from dpone.executor.source._parent_writer import ParentWriter, WrittenParent, scope_index
from dpone.executor.source._spill import Spill, SpillBatch, day_runs

MEMORY_BUDGET = 8 << 20
"""Arrow bytes of rows gathered before a spill, and of a group sorted at once."""
_EPOCH = dt.date(1970, 1, 1)


def sort_order(mapping: PayloadMapping, scope_field: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The declared sort keys (scope first) and the full order with the tie-breaking columns."""
    keys = (scope_field, *(key for key in mapping.sort_keys if key != scope_field))
    rest = tuple(column.name for column in mapping.columns if column.name not in keys)
    return keys, keys + rest


def _is_sorted(table: pa.Table, order: Sequence[str]) -> bool:
    """Whether the rows are already in the parent's order, so the stable sort keeps them.

    Checked column by column over adjacent pairs: only a row pair tied on every earlier column
    is compared on the next one. A column with nulls or NaN answers no (the sort is then run).
    """
    if table.num_rows < 2:
        return True
    tied: pa.Array | None = None
    for name in order:
        column = table.column(name)
        if column.null_count or (pa.types.is_floating(column.type)
                                 and pc.any(pc.is_nan(column)).as_py()):
            return False
        before, after = column[:-1], column[1:]
        inverted = pc.less(after, before)
        if tied is not None:
            inverted = pc.and_(inverted, tied)
        if pc.any(inverted).as_py():
            return False
        equal = pc.equal(after, before)
        tied = equal if tied is None else pc.and_(tied, equal)
        if not pc.any(tied).as_py():
            return True
    return True


class ParentBuilder:
    """Accumulates mapped, bounded batches, then writes the sorted parent."""

    def __init__(self, mapping: PayloadMapping, scope_field: str, schema: pa.Schema, *,
                 scratch: Path, memory_budget: int = MEMORY_BUDGET) -> None:
        self._scope_field = scope_field
        self._schema = schema
        self._types = [column.type for column in mapping.columns]
        _keys, self._order = sort_order(mapping, scope_field)
        self._options = pc.SortOptions([(name, "ascending", "at_end") for name in self._order])
        self._rows_schema = pa.schema([pa.field(field.name, field.type) for field in schema])
        self._scratch = scratch
        self._budget = max(memory_budget, 1)
        self._pending: list[pa.RecordBatch] = []
        self._pending_bytes = 0
        self._spill: Spill | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._pending = []
        if self._spill is not None:
            self._spill.__exit__()

    def add(self, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        if not batch.schema.equals(self._rows_schema):
            batch = pa.RecordBatch.from_arrays(batch.columns, schema=self._rows_schema)
        self._pending.append(batch)
        self._pending_bytes += batch.nbytes
        if self._pending_bytes >= self._budget:
            self._spilled().add_chunk(self._pending)
            self._pending, self._pending_bytes = [], 0
            _release()

    def _spilled(self) -> Spill:
        if self._spill is None:
            self._spill = Spill(self._scratch / "spill.arrow", self._rows_schema,
                                self._scope_field)
        return self._spill

    def write(self, path: Path) -> WrittenParent:
        with ParentWriter(path, self._schema, self._types) as writer:
            if self._spill is None:
                rows = pa.Table.from_batches(self._pending, schema=self._rows_schema)
                self._pending = []
                days = self._sorted_into(writer, rows)
            else:
                with self._spill as spill:
                    if self._pending:
                        spill.add_chunk(self._pending)
                        self._pending = []
                    spill.close()
                    days = self._groups_into(writer, spill)
            index = scope_index([(_EPOCH + dt.timedelta(days=day), rows) for day, rows in days])
            written = writer.finish(index, self._scope_field)
        _release()
        return written

    def _sorted_into(self, writer: ParentWriter, rows: pa.Table) -> list[tuple[int, int]]:
        """Sort ``rows`` (stable) and append them; returns the ``(day, rows)`` runs written."""
        part = self._sorted(rows)
        _append(writer, part)
        return part.runs

    def _sorted(self, rows: pa.Table) -> _Sorted:
        """``rows`` with their stable sort order (None: already in order) and day runs."""
        rows = rows.combine_chunks()
        scope = rows.column(self._scope_field).combine_chunks()
        if _is_sorted(rows, self._order):
            return _Sorted(rows, None, day_runs(scope))
        order = pc.sort_indices(rows, options=self._options)
        return _Sorted(rows, order, day_runs(scope.take(order)))

    def _groups_into(self, writer: ParentWriter, spill: Spill) -> list[tuple[int, int]]:
        """Groups read back and sorted on a thread of their own, one ahead of the one being
        appended (:func:`~dpone.executor.source._ahead.read_ahead`): two groups in memory."""
        days: list[tuple[int, int]] = []
        for part in read_ahead(self._sorted_groups(spill), depth=0):
            _append(writer, part)
            days.extend(part.runs)
            del part
            _release()
        return days

    def _sorted_groups(self, spill: Spill) -> Iterator[_Sorted]:
        per_day: dict[int, list[SpillBatch]] = {}
        for batch in spill.batches:
            per_day.setdefault(batch.day, []).append(batch)
        budget_rows = max(1, spill.rows * self._budget // max(spill.nbytes, 1))
        for group in _groups(per_day, budget_rows):
            group_rows = sum(batch.rows for batch in group)
            if len({batch.day for batch in group}) == 1 and group_rows > budget_rows:
                runs = [(group[0].day, group_rows)]  # the day once, before its first bucket
                for bucket in _split.buckets(functools.partial(spill.read, group), spill.schema,
                                             group_rows, budget_rows, self._options, self._order):
                    sorted_bucket = self._sorted(bucket)
                    del bucket
                    yield _Sorted(sorted_bucket.rows, sorted_bucket.order, runs)
                    runs = []
            else:
                yield self._sorted(pa.Table.from_batches(list(spill.read(group)),
                                                         schema=spill.schema))


@dataclass(frozen=True, slots=True)
class _Sorted:
    """Rows of whole days (or a bucket of one day), their stable order and the day runs."""

    rows: pa.Table
    order: pa.Array | None
    runs: list[tuple[int, int]]


def _append(writer: ParentWriter, part: _Sorted) -> None:
    """Append ``part``'s rows in order, in slices of the writer's room (no sorted copy)."""
    if part.order is None:
        writer.add(part.rows)
        return
    start = 0
    while start < part.rows.num_rows:
        piece = part.order.slice(start, writer.room())
        writer.add(part.rows.take(piece))
        start += len(piece)


def _release() -> None:
    """Hand the memory pyarrow's allocator keeps after a chunk or group back to the system, so
    the freeze's peak, not its sum, is what the process holds."""
    pa.default_memory_pool().release_unused()


def _groups(per_day: dict[int, list[SpillBatch]], budget_rows: int) -> Iterator[list[SpillBatch]]:
    """Runs of consecutive days within ``budget_rows`` together; a bigger day alone. Each run
    lists its spill batches day by day, each day's in input order."""
    group: list[SpillBatch] = []
    group_rows = 0
    for day in sorted(per_day):
        batches = per_day[day]
        rows = sum(batch.rows for batch in batches)
        if group and group_rows + rows > budget_rows:
            yield group
            group, group_rows = [], 0
        group.extend(batches)
        group_rows += rows
    if group:
        yield group
