"""The source freeze's failures, each a catalog code that names the field it is about.

Messages carry no data value except the one refused value itself, cut to
:data:`SHOWN_VALUE_CHARS` characters (what a person needs to find and fix it in the file); no
other cell is ever shown, since error text travels into logs and evidence.
"""

from __future__ import annotations

from dpone.contracts import DponeError

SHOWN_VALUE_CHARS = 40


def shown_value(raw: bytes) -> str:
    """A refused value as a message shows it: decoded (undecodable bytes escaped), cut."""
    text = raw.decode("utf-8", errors="backslashreplace")
    return repr(text if len(text) <= SHOWN_VALUE_CHARS else text[:SHOWN_VALUE_CHARS] + "...")


def _at(row: int | None, line: int | None, value: str | None) -> str:
    """`` (record 42, file line 57, value '12,5')``: what is known of where a value failed."""
    parts = [*([f"record {row}"] if row is not None else []),
             *([f"file line {line}"] if line is not None else []),
             *([f"value {value}"] if value is not None else [])]
    return f" ({', '.join(parts)})" if parts else ""


def _where(column: str, source_column: str | None) -> str:
    if source_column is None or source_column == column:
        return f"column {column!r}"
    return f"column {column!r} (source column {source_column!r})"


def _details(column: str | None, source_column: str | None, **extra: object) -> dict[str, object]:
    details: dict[str, object] = {"column": column}
    if source_column is not None:
        details["source_column"] = source_column
    details.update({key: value for key, value in extra.items() if value is not None})
    return details


def column_missing(column: str, source_column: str, origin: str) -> DponeError:
    return DponeError(
        code="source.column_missing",
        message=f"{_where(column, source_column)} is mapped but {origin} has no such column",
        details=_details(column, source_column))


def type_mismatch(column: str | None, source_column: str | None, reason: str,
                  row: int | None = None, *, line: int | None = None,
                  value: str | None = None) -> DponeError:
    where = _where(column, source_column) if column is not None else "the source"
    return DponeError(code="source.type_mismatch",
                      message=f"{where}{_at(row, line, value)}: {reason}",
                      details=_details(column, source_column, row=row, line=line))


def invalid_utf8(column: str, source_column: str | None, row: int | None = None, *,
                 line: int | None = None, value: str | None = None) -> DponeError:
    return DponeError(code="source.invalid_utf8",
                      message=f"{_where(column, source_column)}{_at(row, line, value)} holds "
                              "bytes that are not UTF-8",
                      details=_details(column, source_column, row=row, line=line))


def unreadable(reason: str) -> DponeError:
    """The file is not a readable file of its declared format: no column is to blame."""
    return DponeError(code="source.unreadable", message=reason)


def null_in_required(column: str, source_column: str | None, row: int) -> DponeError:
    return DponeError(
        code="source.null_in_required",
        message=f"{_where(column, source_column)} is not nullable but record {row} is null",
        details=_details(column, source_column, row=row))


def unavailable(message: str, **details: object) -> DponeError:
    return DponeError(code="source.unavailable", message=message, details=dict(details))
