"""CSV file source: pyarrow's streaming CSV reader with the mapping's column types.

Dialect: UTF-8, comma, ``"`` quoting (doubled to escape), a header row. A null is an empty
unquoted field and an empty string is ``""``; booleans are ``true``/``false``; dates are
``YYYY-MM-DD``; timestamps are ISO 8601 with ``Z`` or an offset and become UTC. A CSV file has no
index, so every record is parsed (a malformed value anywhere in the file fails the freeze) and
the boundary is applied to the parsed batches. A value that does not convert is reported with its
column and record number (the data row, counted from 1 after the header), never its content.
"""

from __future__ import annotations

import contextlib
import csv
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv

from dpone.contracts import DponeError
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.source_parent import ParentSource
from dpone.executor.source import _failures, _reading
from dpone.executor.source._ahead import read_ahead
from dpone.executor.source._file import PinnedFile

# pyarrow reads up to 32 blocks ahead of the parser: small blocks keep that read-ahead small.
# A record longer than a block cannot be parsed, so the read restarts with larger blocks at the
# record that failed (the rows before it are skipped, not read twice).
_BLOCK_SIZE = 1 << 19
_MAX_BLOCK_SIZE = 1 << 27
_STRADDLING = "straddling object"
_HEADER_OPTIONS = pa_csv.ReadOptions(use_threads=False, block_size=1 << 20)
_PROBE_OPTIONS = pa_csv.ReadOptions(use_threads=False)
_MALFORMED = ("the CSV file is empty or malformed (no header, a record with the wrong number of "
              "fields, or unbalanced quotes)")


class CsvFileReader:
    def __init__(self, path: Path, mapping: PayloadMapping) -> None:
        self._pinned = PinnedFile(path)
        self._mapping = mapping
        self._types = _reading.source_types(mapping)
        self._block_size = _BLOCK_SIZE
        self._record = 1

    def _open(self, types: dict[str, pa.DataType]) -> pa_csv.CSVStreamingReader:
        options = pa_csv.ReadOptions(use_threads=True, block_size=self._block_size)
        return pa_csv.open_csv(self._pinned.path, read_options=options,
                               parse_options=_reading.CSV_PARSE_OPTIONS,
                               convert_options=_reading.csv_convert_options(types, list(types)))

    def _header(self) -> list[str]:
        try:
            probe = pa_csv.open_csv(self._pinned.path, read_options=_HEADER_OPTIONS,
                                    parse_options=_reading.CSV_PARSE_OPTIONS)
            names = list(probe.schema.names)
            probe.close()
        except UnicodeDecodeError:
            raise _failures.unreadable("the CSV header is not UTF-8 text") from None
        except pa.ArrowInvalid:
            raise _failures.unreadable(_MALFORMED) from None
        except OSError as exc:
            raise _failures.unavailable("the source file cannot be read",
                                        errno=exc.errno) from None
        return names

    def batches(self) -> Iterator[tuple[int, pa.RecordBatch]]:
        _reading.require_columns(self._mapping, self._header(), "the CSV header")
        record = 1
        while True:
            try:
                yield from self._batches_from(record)
                return
            except pa.ArrowInvalid as exc:
                if _STRADDLING not in str(exc) or self._block_size >= _MAX_BLOCK_SIZE:
                    raise self._diagnose() from None
                self._block_size *= 8
                record = self._record
            except OSError as exc:
                raise _failures.unavailable("the source file cannot be read",
                                            errno=exc.errno) from None

    def _batches_from(self, record: int) -> Iterator[tuple[int, pa.RecordBatch]]:
        """The mapped batches from data record ``record`` on (``self._record`` follows)."""
        self._record = record
        skip = record - 1
        for raw in read_ahead(self._open(self._types)):
            if skip >= raw.num_rows:
                skip -= raw.num_rows
                continue
            part = raw.slice(skip) if skip else raw
            skip = 0
            yield self._record, _reading.mapped_batch(self._mapping, part)
            self._record += part.num_rows

    def _fails(self, types: dict[str, pa.DataType]) -> bool:
        try:
            for _ in self._open(types):
                pass
        except pa.ArrowInvalid:
            return True
        return False

    def _diagnose(self) -> DponeError:
        """Name the column and record that failed: re-read the file one column at a time."""
        if self._fails({name: pa.large_binary() for name in self._types}):
            return _failures.unreadable(_MALFORMED)
        for name, arrow_type in self._types.items():
            if self._fails({name: arrow_type}):
                found = self._first_failing_record(name, arrow_type)
                if found is None:
                    return _reading.blame(_reading.owner(self._mapping, name))
                record, value = found
                return _reading.blame(_reading.owner(self._mapping, name), record,
                                      line=_file_line(self._pinned.path, record), value=value)
        return _failures.unreadable("the CSV file cannot be read")

    def _first_failing_record(self, name: str,
                              arrow_type: pa.DataType) -> tuple[int, bytes] | None:
        """The record number and raw bytes of the first value of ``name`` that ``arrow_type``
        refuses: the column is read as raw bytes and each batch is bisected with the same
        converter."""
        record = 1
        for raw in self._open({name: pa.large_binary()}):
            values = [(i, v) for i, v in enumerate(raw.column(0).to_pylist()) if v is not None]
            if not _converts([v for _, v in values], arrow_type):
                index, value = values[_first_refused([v for _, v in values], arrow_type)]
                return record + index, value
            record += raw.num_rows
        return None

    def version(self) -> ParentSource:
        self._pinned.check_unchanged()
        return ParentSource(type="file", format="csv", version=self._pinned.digest)

    def close(self) -> None:
        return None


def _file_line(path: Path, record: int) -> int | None:
    """The 1-based line of the file where data record ``record`` (counted from 1 after the
    header) starts: quoted fields may hold line breaks, so a record is not a line."""
    with contextlib.suppress(OSError, csv.Error), path.open(
            encoding="utf-8", errors="replace", newline="") as handle:
        reader = csv.reader(handle)
        next(reader, None)
        start = reader.line_num + 1
        for number, _ in enumerate(reader, start=1):
            if number == record:
                return start
            start = reader.line_num + 1
        return None
    return None


def _converts(values: Sequence[bytes], arrow_type: pa.DataType) -> bool:
    """Whether the product's CSV converter accepts every value (each written as a quoted field:
    quoting changes no conversion but keeps separators and line breaks inside the value)."""
    body = b"".join(b'"' + value.replace(b'"', b'""') + b'"\n' for value in values)
    try:
        pa_csv.read_csv(pa.BufferReader(b"v\n" + body), read_options=_PROBE_OPTIONS,
                        parse_options=_reading.CSV_PARSE_OPTIONS,
                        convert_options=_reading.csv_convert_options({"v": arrow_type}, ["v"]))
    except pa.ArrowInvalid:
        return False
    return True


def _first_refused(values: Sequence[bytes], arrow_type: pa.DataType) -> int:
    """The index of the first refused value, given that some value is refused (bisection)."""
    low, high = 0, len(values)
    while high - low > 1:
        middle = (low + high) // 2
        if _converts(values[low:middle], arrow_type):
            low = middle
        else:
            high = middle
    return low
