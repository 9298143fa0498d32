"""What every source reader shares: the reader protocol and the mapping of one raw batch."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

import pyarrow as pa
import pyarrow.csv as pa_csv

from dpone.contracts import DponeError
from dpone.contracts.mapping import ColumnType, MappedColumn, PayloadMapping
from dpone.contracts.source_parent import ParentSource
from dpone.executor.source import _arrow, _failures

READ_BATCH_ROWS = 65_536

MISMATCH_REASONS: dict[ColumnType, str] = {
    "string": "a value is not text",
    "int64": "a value is not a 64-bit integer",
    "float64": "a value is not a number",
    "bool": "a value is not a boolean",
    "date": "a value is not an ISO 8601 date (YYYY-MM-DD)",
    "timestamp": "a value is not an ISO 8601 timestamp with a zone offset "
                 "(microsecond precision or coarser)",
}


class SourceReader(Protocol):
    """Reads one source for one boundary; ``close`` releases it (and ends any snapshot)."""

    def batches(self) -> Iterator[tuple[int, pa.RecordBatch]]:
        """Yield ``(first record number, batch)``: the mapped columns, named and typed as mapped.

        The reader may already have dropped rows outside the boundary; it need not drop all.
        """
        ...

    def version(self) -> ParentSource:
        """The immutable version that was read; called after ``batches`` is exhausted."""
        ...

    def close(self) -> None: ...


def require_columns(mapping: PayloadMapping, available: Iterable[str], origin: str) -> None:
    """Fail with ``source.column_missing`` on the first mapped column the source lacks."""
    present = set(available)
    for column in mapping.columns:
        if column.source_column not in present:
            raise _failures.column_missing(column.name, column.source_column, origin)


def source_types(mapping: PayloadMapping) -> dict[str, pa.DataType]:
    """The Arrow type to read each distinct source column as (its first mapped column's)."""
    types: dict[str, pa.DataType] = {}
    for column in mapping.columns:
        types.setdefault(column.source_column, _arrow.ARROW_TYPES[column.type])
    return types


def owner(mapping: PayloadMapping, source_column: str) -> MappedColumn:
    """The first mapped column that reads ``source_column``."""
    return next(c for c in mapping.columns if c.source_column == source_column)


def mapped_batch(mapping: PayloadMapping, raw: pa.RecordBatch | pa.Table) -> pa.RecordBatch:
    """Project and cast one raw batch to the mapped columns, in mapping order."""
    arrays = [_arrow.conform(raw.column(c.source_column), c) for c in mapping.columns]
    return pa.RecordBatch.from_arrays(arrays, names=[c.name for c in mapping.columns])


def csv_convert_options(column_types: dict[str, pa.DataType], include: Sequence[str], *,
                        true_value: str = "true", false_value: str = "false"
                        ) -> pa_csv.ConvertOptions:
    """The product's CSV dialect: a null is an empty unquoted field, ``""`` an empty string."""
    return pa_csv.ConvertOptions(
        column_types=column_types,
        include_columns=list(include),
        include_missing_columns=False,
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
        true_values=[true_value],
        false_values=[false_value],
        check_utf8=True,
    )


CSV_PARSE_OPTIONS = pa_csv.ParseOptions(delimiter=",", quote_char='"', double_quote=True,
                                        escape_char=False, newlines_in_values=True)


def blame(column: MappedColumn, row: int | None = None, *, line: int | None = None,
          value: bytes | None = None) -> DponeError:
    """The failure of a column whose values the reader could not convert (at record ``row``,
    file line ``line``, the refused ``value``, when the reader can tell)."""
    shown = _failures.shown_value(value) if value is not None else None
    if column.type == "string":
        return _failures.invalid_utf8(column.name, column.source_column, row, line=line,
                                      value=shown)
    return _failures.type_mismatch(column.name, column.source_column,
                                   MISMATCH_REASONS[column.type], row, line=line, value=shown)
