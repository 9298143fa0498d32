"""PostgreSQL source: one REPEATABLE READ READ ONLY snapshot, streamed as CSV into Arrow.

The reader opens one connection and one transaction, records the server version and
``pg_current_snapshot()``, checks the mapped columns' database types, and streams
``COPY (SELECT ... WHERE scope in [from, to) OR scope IS NULL) TO STDOUT (FORMAT csv)`` into
pyarrow's CSV reader, so values are converted column by column in Arrow rather than row by row in
Python. Timestamps travel as integer microseconds since the epoch (an infinite one as
text, which fails conversion with the column named). The transaction and the
connection stay open until ``close``, which the freeze calls once the parent is durable.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
import pyarrow as pa
import pyarrow.csv as pa_csv
from psycopg import sql

from dpone.contracts import DponeError, content_digest
from dpone.contracts.mapping import ColumnType, MappedColumn, PayloadMapping
from dpone.contracts.plan import ResolvedSource
from dpone.contracts.source_parent import ParentSource, PostgresSnapshotVersion
from dpone.executor.source import _arrow, _failures, _reading

APPLICATION_NAME = "dpone-source-freeze"
_SAVEPOINT = "SAVEPOINT dpone_source_read"
_BACK_TO_SAVEPOINT = "ROLLBACK TO SAVEPOINT dpone_source_read"

_ACCEPTED: dict[ColumnType, frozenset[str]] = {
    "string": frozenset({"text", "varchar", "bpchar", "name"}),
    "int64": frozenset({"int2", "int4", "int8"}),
    "float64": frozenset({"int2", "int4", "float4", "float8"}),
    "bool": frozenset({"bool"}),
    "date": frozenset({"date"}),
    "timestamp": frozenset({"timestamptz"}),
}
_STREAM_TYPES: dict[ColumnType, pa.DataType] = {**_arrow.ARROW_TYPES, "timestamp": pa.int64()}
_SESSION = (
    "SET LOCAL TimeZone = 'UTC'",
    "SET LOCAL DateStyle = 'ISO, YMD'",
    "SET LOCAL extra_float_digits = 1",
)


class _CopyStream(io.RawIOBase):
    """A readable file over ``COPY ... TO STDOUT`` data, for pyarrow's CSV reader."""

    def __init__(self, copy: psycopg.Copy) -> None:
        super().__init__()
        self._read = copy.read
        self._pending = bytearray()

    def readable(self) -> bool:
        return True

    def is_empty(self) -> bool:
        """True when the COPY returned no row (pyarrow refuses an empty CSV input)."""
        if not self._pending:
            self._pending += self._read()
        return not self._pending

    def readinto(self, buffer: Any) -> int:
        target = memoryview(buffer).cast("B")
        pending, read, wanted = self._pending, self._read, len(target)
        while len(pending) < wanted:  # one COPY message is one row: keep this loop lean
            chunk = read()
            if not chunk:
                break
            pending += chunk
        size = min(wanted, len(pending))
        target[:size] = pending[:size]
        del pending[:size]
        return size


def _expression(column: MappedColumn) -> sql.Composable:
    ref = sql.SQL("src.{}").format(sql.Identifier(column.source_column))
    if column.type == "string":
        return sql.SQL("{}::text").format(ref)
    if column.type == "int64":
        return sql.SQL("{}::int8").format(ref)
    if column.type == "float64":
        return sql.SQL("{}::float8").format(ref)
    if column.type == "timestamp":
        # Infinite instants come through as text that Arrow refuses, so the column is named.
        return sql.SQL("CASE WHEN isfinite({ref}) THEN ((extract(epoch FROM {ref}) * 1000000)"
                       "::int8)::text ELSE {ref}::text END").format(ref=ref)
    return ref


def _translate(exc: psycopg.Error) -> DponeError:
    """A driver error as a source failure; the text of the server's message is not kept."""
    state = exc.sqlstate or ""
    if state.startswith("22"):
        return _failures.type_mismatch(None, None,
                                       f"the database could not convert a value (SQLSTATE {state})")
    return _failures.unavailable(f"the source database failed (SQLSTATE {state or 'none'})",
                                 sqlstate=state or None)


class PostgresReader:
    def __init__(self, dsn: str, source: ResolvedSource, mapping: PayloadMapping,
                 scope: MappedColumn, from_date: dt.date, to_date: dt.date) -> None:
        self._mapping = mapping
        self._scope = scope
        self._bounds = (from_date, to_date)
        if source.table:
            self._relation: sql.Composable = sql.Identifier(*source.table.split("."))
        elif source.query:
            self._relation = sql.SQL("({})").format(sql.SQL(source.query))
        else:
            raise DponeError(code="input.invalid_argument",
                             message="a postgres source needs a table or a query")
        try:
            self._conn = psycopg.connect(dsn, autocommit=True, connect_timeout=30,
                                         application_name=APPLICATION_NAME,
                                         client_encoding="UTF8")
        except psycopg.Error as exc:
            raise _failures.unavailable("cannot connect to the source database",
                                        sqlstate=exc.sqlstate) from None
        try:
            self._snapshot = self._begin()
        except psycopg.Error as exc:
            self._conn.close()
            raise _translate(exc) from None
        except BaseException:
            self._conn.close()
            raise
        self._statement = ""

    def _begin(self) -> tuple[str, str]:
        self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        for statement in _SESSION:
            self._conn.execute(statement)
        row = self._conn.execute(
            "SELECT current_setting('server_version'), pg_current_snapshot()::text").fetchone()
        if row is None:
            raise _failures.unavailable("the source database returned no snapshot")
        return str(row[0]), str(row[1])

    def _check_types(self) -> None:
        cursor = self._conn.execute(
            sql.SQL("SELECT * FROM {} AS src LIMIT 0").format(self._relation))
        described = {column.name: column.type_code for column in cursor.description or ()}
        _reading.require_columns(self._mapping, described, "the source relation")
        for column in self._mapping.columns:
            info = self._conn.adapters.types.get(described[column.source_column])
            name = info.name if info is not None else f"oid {described[column.source_column]}"
            if name in _ACCEPTED[column.type]:
                continue
            reason = f"database type {name} cannot hold mapped type {column.type}"
            if column.type == "timestamp" and name == "timestamp":
                reason = ("timestamp without time zone; the mapping needs an instant "
                          "(use timestamptz or convert with AT TIME ZONE)")
            raise _failures.type_mismatch(column.name, column.source_column, reason)

    def _where(self) -> sql.Composed:
        scope = sql.SQL("src.{}").format(sql.Identifier(self._scope.source_column))
        low, high = (sql.Literal(day) for day in self._bounds)
        return sql.SQL("({scope} >= {low} AND {scope} < {high}) OR {scope} IS NULL").format(
            scope=scope, low=low, high=high)

    def _copy_statement(self, columns: Sequence[MappedColumn]) -> sql.Composed:
        return sql.SQL(
            "COPY (SELECT {columns} FROM {relation} AS src WHERE {where}) TO STDOUT (FORMAT csv)"
        ).format(columns=sql.SQL(", ").join(_expression(c) for c in columns),
                 relation=self._relation, where=self._where())

    def _stream(self, columns: Sequence[MappedColumn]) -> Iterator[pa.RecordBatch]:
        """Raw batches of one COPY; on a conversion error the COPY is drained, not cancelled."""
        names = [f"c{index}" for index in range(len(columns))]
        types = {name: _STREAM_TYPES[c.type] for name, c in zip(names, columns, strict=True)}
        statement = self._copy_statement(columns)
        if len(columns) == len(self._mapping.columns):
            self._statement = statement.as_string(self._conn)
        with self._conn.cursor() as cursor, cursor.copy(statement) as copy:
            stream = _CopyStream(copy)
            if stream.is_empty():
                return
            reader = pa_csv.open_csv(
                stream,
                read_options=pa_csv.ReadOptions(column_names=names, use_threads=False,
                                                block_size=1 << 22),
                parse_options=_reading.CSV_PARSE_OPTIONS,
                convert_options=_reading.csv_convert_options(types, names, true_value="t",
                                                             false_value="f"))
            try:
                yield from reader
            except pa.ArrowInvalid:
                reader.close()
                while copy.read():
                    pass
                raise

    def batches(self) -> Iterator[tuple[int, pa.RecordBatch]]:
        columns = list(self._mapping.columns)
        try:
            self._check_types()
            self._conn.execute(_SAVEPOINT)
            record = 1
            try:
                for raw in self._stream(columns):
                    arrays = [
                        array.cast(_arrow.ARROW_TYPES["timestamp"]) if c.type == "timestamp"
                        else array for array, c in zip(raw.columns, columns, strict=True)]
                    yield record, pa.RecordBatch.from_arrays(arrays, names=[c.name for c in columns])
                    record += raw.num_rows
            except (pa.ArrowInvalid, psycopg.DataError):
                raise self._diagnose() from None
        except psycopg.Error as exc:
            raise _translate(exc) from None

    def _diagnose(self) -> DponeError:
        """Name the failing column: re-run the COPY one column at a time in the same snapshot.

        A conversion the server refuses (SQLSTATE class 22) aborts only the savepoint taken
        before the first COPY, so the snapshot survives for the next attempt.
        """
        self._conn.execute(_BACK_TO_SAVEPOINT)
        try:  # the relation itself (its FROM and WHERE) may be what fails
            self._conn.execute(sql.SQL("SELECT count(*) FROM {relation} AS src WHERE {where}").format(
                relation=self._relation, where=self._where()))
        except psycopg.DataError as exc:
            self._conn.execute(_BACK_TO_SAVEPOINT)
            return _failures.type_mismatch(
                None, None, f"the source query cannot be evaluated (SQLSTATE {exc.sqlstate})")
        for column in self._mapping.columns:
            try:
                for _ in self._stream([column]):
                    pass
            except pa.ArrowInvalid:
                return _reading.blame(column)
            except psycopg.DataError as exc:
                self._conn.execute(_BACK_TO_SAVEPOINT)
                return _failures.type_mismatch(
                    column.name, column.source_column,
                    f"the database could not convert a value (SQLSTATE {exc.sqlstate})")
        return _failures.type_mismatch(None, None, "the source rows could not be converted")

    def version(self) -> ParentSource:
        server_version, snapshot = self._snapshot
        return ParentSource(type="postgres", version=PostgresSnapshotVersion(
            server_version=server_version, snapshot=snapshot,
            query_digest=content_digest(self._statement.encode("utf-8"))))

    def close(self) -> None:
        """End the snapshot and the connection (a failed COMMIT still closes the connection)."""
        try:
            with contextlib.suppress(psycopg.Error):
                if not self._conn.closed and not self._conn.broken:
                    self._conn.execute("COMMIT")
        finally:
            self._conn.close()
