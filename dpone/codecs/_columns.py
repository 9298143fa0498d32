"""Input checking, slicing and the typed text rules shared by every table encoder.

Input is a ``pyarrow.Table``, a ``RecordBatch`` or an iterable of record batches whose columns
are exactly the mapping's columns, in mapping order, with these Arrow types:

==========  ==================================================================
mapping     Arrow
==========  ==================================================================
string      ``string`` or ``large_string`` (valid UTF-8)
int64       ``int64``
float64     ``float64`` (finite; NaN and infinities are refused)
bool        ``bool``
date        ``date32`` (years 0001-9999)
timestamp   ``timestamp(s|ms|us|ns, tz="UTC")`` (years 0001-9999)
==========  ==================================================================

A null in a column the mapping declares ``nullable: false`` is refused. Encoders work on
slices of at most :data:`SLICE_ROWS` rows; small input batches are coalesced first. Every rule
here is per value, so the encoded bytes never depend on how the input was batched.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from dpone.codecs._arrow import TEXT, Array, as_text, first_true
from dpone.codecs._errors import PayloadEncodingError
from dpone.codecs._floats import first_non_finite, format_float
from dpone.contracts.mapping import MappedColumn, PayloadMapping

SLICE_ROWS = 65_536
"""Rows formatted per kernel pass: bounds memory to one slice, amortizes kernel overhead."""

Batches = Any
"""``pyarrow.Table`` | ``pyarrow.RecordBatch`` | ``Iterable[pyarrow.RecordBatch]``."""

Precision = Literal["s", "ms", "us"]

# Inclusive bounds of years 0001..9999 (ISO 8601 four-digit years).
_MIN_DAY = -719_162  # 0001-01-01
_MAX_DAY = 2_932_896  # 9999-12-31
_UNITS_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
# Length of "YYYY-MM-DD HH:MM:SS[.f...]" as Arrow casts a naive timestamp to text.
_STAMP_LENGTH = {"s": 19, "ms": 23, "us": 26}


@dataclass(frozen=True, slots=True)
class Slice:
    """A validated slice of input: ``first_row`` is its 0-based row index in the stream."""

    first_row: int
    batch: Any


def slices(batches: Batches, mapping: PayloadMapping) -> Iterator[Slice]:
    """Validated, coalesced slices of the input, in order."""
    probe_arrow_text()
    pending: list[Any] = []
    pending_rows = 0
    emitted = 0
    for batch in _record_batches(batches):
        check_schema(batch.schema, mapping)
        for start in range(0, batch.num_rows, SLICE_ROWS):
            piece = batch.slice(start, SLICE_ROWS)
            pending.append(piece)
            pending_rows += piece.num_rows
            if pending_rows >= SLICE_ROWS:
                yield _checked(Slice(emitted, _combine(pending)), mapping)
                emitted += pending_rows
                pending, pending_rows = [], 0
    if pending_rows:
        yield _checked(Slice(emitted, _combine(pending)), mapping)


def _record_batches(batches: Batches) -> Iterable[Any]:
    if isinstance(batches, pa.Table):
        listed: list[Any] = batches.to_batches()
        return listed
    if isinstance(batches, pa.RecordBatch):
        return (batches,)
    stream: Iterable[Any] = batches
    return stream


def _combine(pieces: list[Any]) -> Any:
    if len(pieces) == 1:
        return pieces[0]
    return pa.Table.from_batches(pieces).combine_chunks().to_batches()[0]


def _allowed(column: MappedColumn, arrow_type: Any) -> bool:
    kind = column.type
    if kind == "string":
        return bool(arrow_type in (pa.string(), pa.large_string()))
    if kind == "timestamp":
        return bool(pa.types.is_timestamp(arrow_type) and arrow_type.tz == "UTC")
    expected = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "date": pa.date32()}
    return bool(arrow_type == expected[kind])


def check_schema(schema: Any, mapping: PayloadMapping) -> None:
    """Refuse a schema that is not exactly the mapping's columns, order and types."""
    names = list(schema.names)
    expected = [column.name for column in mapping.columns]
    if names != expected:
        raise PayloadEncodingError(
            f"input columns {names} are not the mapping's columns {expected} in mapping order"
        )
    for column, field in zip(mapping.columns, schema, strict=True):
        if not _allowed(column, field.type):
            raise PayloadEncodingError(
                f"Arrow type {field.type} does not carry mapping type {column.type!r}",
                column=column.name,
            )


def _checked(piece: Slice, mapping: PayloadMapping) -> Slice:
    for column, values in zip(mapping.columns, piece.batch.columns, strict=True):
        if values.null_count and not column.nullable:
            row = piece.first_row + first_true(pc.is_null(values))
            raise PayloadEncodingError("null in a column the mapping declares not nullable",
                                       column=column.name, row=row)
        if column.type == "string":
            _check_utf8(values, column.name, piece.first_row)
    return piece


def _check_utf8(values: Array, name: str, first_row: int) -> None:
    try:
        values.validate(full=True)
    except pa.ArrowInvalid:
        for index, raw in enumerate(values.cast(pa.large_binary()).to_pylist()):
            if raw is not None:
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise PayloadEncodingError("invalid UTF-8 in a string value",
                                               column=name, row=first_row + index) from None
        raise PayloadEncodingError("invalid string array", column=name) from None


def format_scalar(values: Array, column: MappedColumn, precision: Precision, first_row: int) -> Array:
    """A non-string column as ``large_string`` text, nulls kept (see the module rules)."""
    kind = column.type
    if kind == "float64":
        bad = first_non_finite(values)
        if bad is not None:
            raise PayloadEncodingError("NaN and infinity have no encoding; clean the source",
                                       column=column.name, row=first_row + bad)
        return format_float(values)
    if kind == "date":
        _check_range(values.view(pa.int32()), _MIN_DAY, _MAX_DAY, column.name, first_row)
        return as_text(pc.cast(values, TEXT))
    if kind == "timestamp":
        return format_timestamp(values, precision, column.name, first_row)
    # int64 and bool: Arrow's cast is exact decimal text and true/false.
    return as_text(pc.cast(values, TEXT))


def format_timestamp(values: Array, precision: Precision, name: str, first_row: int) -> Array:
    """UTC timestamps as ``YYYY-MM-DDTHH:MM:SS[.f]Z`` with exactly the codec's precision.

    A value with non-zero digits finer than the precision is refused rather than truncated.
    """
    unit = values.type.unit
    per_second = _UNITS_PER_SECOND[unit]
    _check_range(values.view(pa.int64()), _MIN_DAY * 86_400 * per_second,
                 (_MAX_DAY + 1) * 86_400 * per_second - 1, name, first_row)
    target = pa.timestamp(precision, tz="UTC")
    if _UNITS_PER_SECOND[precision] < per_second:
        coarse = pc.cast(values, target, safe=False)
        lossy = pc.not_equal(pc.cast(coarse, values.type), values)
        if pc.any(lossy).as_py():
            raise PayloadEncodingError(
                f"timestamp has digits finer than the codec precision {precision!r}; "
                "refused rather than truncated",
                column=name, row=first_row + first_true(lossy))
        values = coarse
    elif unit != precision:
        values = pc.cast(values, target)
    # A naive cast to text is ~30x faster than strftime with a time zone; the values are UTC.
    stamped = as_text(pc.cast(pc.cast(values, pa.timestamp(precision)), TEXT))
    spaced = pc.binary_replace_slice(stamped, 10, 11, "T")
    end = _STAMP_LENGTH[precision]
    return pc.binary_replace_slice(spaced, end, end, "Z")


def _check_range(raw: Array, low: int, high: int, name: str, first_row: int) -> None:
    if raw.null_count == len(raw):
        return
    bounds = pc.min_max(raw).as_py()
    if bounds["min"] >= low and bounds["max"] <= high:
        return
    outside = pc.or_(pc.less(raw, low), pc.greater(raw, high))
    raise PayloadEncodingError("date or timestamp outside years 0001-9999",
                               column=name, row=first_row + first_true(outside))



_PROBE_FLOATS = (0.1, 1 / 3, -0.0, 100.0, 1e15, 1e16, 1e-05, 5e-324, 1.7976931348623157e308, -123.456)
_PROBE_DAYS = (dt.date(1, 1, 1), dt.date(2026, 8, 1), dt.date(9999, 12, 31))
_PROBE_STAMPS: dict[Precision, tuple[str, ...]] = {
    "s": ("0001-01-01T00:00:00Z", "2026-08-01T00:00:01Z", "9999-12-31T23:59:59Z"),
    "ms": ("0001-01-01T00:00:00.000Z", "2026-08-01T00:00:01.601Z", "9999-12-31T23:59:59.999Z"),
    "us": ("0001-01-01T00:00:00.000000Z", "2026-08-01T00:00:01.601000Z",
           "9999-12-31T23:59:59.999999Z"),
}


@functools.cache
def probe_arrow_text() -> None:
    """Check once per process that this pyarrow renders the probe values by the rules.

    The encoders rely on the text layout of Arrow's casts (shortest float digits, ISO dates,
    ``YYYY-MM-DD HH:MM:SS.fff`` timestamps); a pyarrow release that changed one would
    otherwise change payload bytes silently. Refuses to encode instead.
    """
    column = MappedColumn(name="probe", type="float64")
    checks: list[tuple[Any, MappedColumn, Precision, list[str]]] = [
        (pa.array(_PROBE_FLOATS), column, "ms", [repr(v) for v in _PROBE_FLOATS]),
        (pa.array([-(2**63), 0, 2**63 - 1]), column.model_copy(update={"type": "int64"}), "ms",
         [str(-(2**63)), "0", str(2**63 - 1)]),
        (pa.array([True, False]), column.model_copy(update={"type": "bool"}), "ms", ["true", "false"]),
        (pa.array(_PROBE_DAYS), column.model_copy(update={"type": "date"}), "ms",
         [d.isoformat() for d in _PROBE_DAYS]),
    ]
    moments = [dt.datetime(1, 1, 1), dt.datetime(2026, 8, 1, 0, 0, 1, 601000),
               dt.datetime(9999, 12, 31, 23, 59, 59, 999999)]
    for precision, expected in _PROBE_STAMPS.items():
        stamps = pc.cast(pa.array(moments, pa.timestamp("us")), pa.timestamp(precision), safe=False)
        checks.append((pc.cast(stamps, pa.timestamp(precision, tz="UTC")),
                       column.model_copy(update={"type": "timestamp"}), precision, list(expected)))
    for values, probe, precision, wanted in checks:
        if format_scalar(values, probe, precision, 0).to_pylist() != wanted:
            raise RuntimeError(f"pyarrow {pa.__version__} renders {probe.type} values unlike the "
                               "codec rules; this pyarrow release is not supported for sealing")
