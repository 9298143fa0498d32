"""The boundary ``[from, to)`` on the scope field and the required-column checks, per batch."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from dpone.contracts.mapping import MappedColumn, PayloadMapping
from dpone.executor.source import _failures


def _first_true(mask: pa.Array) -> int | None:
    if not pc.any(mask).as_py():
        return None
    return int(pc.index(mask, True).as_py())


@dataclass(frozen=True, slots=True)
class Selection:
    """Keeps the rows of one boundary and refuses nulls where the mapping forbids them.

    A null scope date fails wherever it is (the row can be neither in nor out of the boundary);
    a null in another required column fails only for rows inside the boundary. Record numbers in
    errors are 1-based positions in the reader's record order.
    """

    mapping: PayloadMapping
    scope: MappedColumn
    from_date: dt.date
    to_date: dt.date

    def apply(self, batch: pa.RecordBatch, first_record: int) -> pa.RecordBatch:
        scope = batch.column(self.scope.name)
        if scope.null_count:
            row = _first_true(pc.is_null(scope))
            raise _failures.null_in_required(self.scope.name, self.scope.source_column,
                                             first_record + (row or 0))
        inside = pc.and_(pc.greater_equal(scope, pa.scalar(self.from_date, pa.date32())),
                         pc.less(scope, pa.scalar(self.to_date, pa.date32())))
        for column in self.mapping.columns:
            if column.nullable or column.name == self.scope.name:
                continue
            values = batch.column(column.name)
            if not values.null_count:
                continue
            row = _first_true(pc.and_(pc.is_null(values), inside))
            if row is not None:
                raise _failures.null_in_required(column.name, column.source_column,
                                                 first_record + row)
        if pc.all(inside).as_py():
            return batch
        return batch.filter(inside)
