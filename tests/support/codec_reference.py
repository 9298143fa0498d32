"""Independent oracles and readers for the codec tests.

Nothing here imports dpone.codecs: the reference encoders are plain per-row Python written
from the documented rules, and the readers are pyarrow's CSV reader, the json module and a
hand-written multipart parser, so a codec bug cannot hide itself.
"""

from __future__ import annotations

import datetime as dt
import io
import itertools
import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv
from hypothesis import strategies as st

from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.profile import CsvCodec, JsonCodec

UTC = dt.UTC
TYPES = ("string", "int64", "float64", "bool", "date", "timestamp")


def mapping_of(*columns: tuple[str, str] | tuple[str, str, bool]) -> PayloadMapping:
    """A mapping from (name, type[, nullable]) triples; the first column is the sort key."""
    return PayloadMapping.model_validate({
        "schema": "dpone.payload_mapping.v1",
        "id": "test.codecs.v1",
        "columns": tuple({"name": c[0], "type": c[1], "nullable": c[2] if len(c) > 2 else True}
                         for c in columns),
        "sort_keys": (columns[0][0],),
    })


def arrow_type(kind: str, unit: str = "ms") -> pa.DataType:
    return {
        "string": pa.string(), "int64": pa.int64(), "float64": pa.float64(),
        "bool": pa.bool_(), "date": pa.date32(), "timestamp": pa.timestamp(unit, tz="UTC"),
    }[kind]


def table_of(mapping: PayloadMapping, rows: Sequence[Sequence[Any]], unit: str = "ms") -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in mapping.columns]
    return pa.table({c.name: pa.array(list(values), arrow_type(c.type, unit))
                     for c, values in zip(mapping.columns, columns, strict=True)},
                    schema=schema_of(mapping, unit))


def schema_of(mapping: PayloadMapping, unit: str = "ms") -> pa.Schema:
    return pa.schema([(c.name, arrow_type(c.type, unit)) for c in mapping.columns])


def split(table: pa.Table, cuts: Sequence[int]) -> list[pa.RecordBatch]:
    """The table as record batches cut at the given row positions (empty batches included)."""
    points = sorted({min(max(cut, 0), table.num_rows) for cut in cuts})
    bounds = [0, *points, table.num_rows]
    batches = []
    for start, end in itertools.pairwise(bounds):
        piece = table.slice(start, end - start).combine_chunks().to_batches()
        batches.extend(piece or [pa.RecordBatch.from_pylist([], schema=table.schema)])
    return batches


# -- reference text rules ---------------------------------------------------------------------

_DIGITS = {"s": 0, "ms": 3, "us": 6}


def stamp(value: dt.datetime, precision: str) -> str:
    value = value.astimezone(UTC)
    text = (f"{value.year:04d}-{value.month:02d}-{value.day:02d}T"
            f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}")
    digits = _DIGITS[precision]
    if digits:
        text += "." + f"{value.microsecond:06d}"[:digits]
    return text + "Z"


def day(value: dt.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def scalar_text(kind: str, value: Any, precision: str) -> str:
    if kind == "int64":
        return str(value)
    if kind == "float64":
        return repr(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind == "date":
        return day(value)
    return stamp(value, precision)


def reference_csv(mapping: PayloadMapping, rows: Sequence[Sequence[Any]], codec: CsvCodec) -> bytes:
    """CSV per the documented rules, one Python row at a time."""
    specials = (codec.delimiter, '"', "\r", "\n")
    bare = [t for t in (codec.null, codec.empty_string) if t and t != '""']

    def quote(text: str) -> str:
        return '"' + text.replace('"', '""') + '"'

    def field(kind: str, value: Any) -> str:
        if value is None:
            return codec.null
        if kind != "string":
            return scalar_text(kind, value, codec.timestamp_precision)
        if value == "":
            return codec.empty_string
        if codec.quoting == "all_strings" or any(c in value for c in specials) or value in bare:
            return quote(value)
        return value

    lines = []
    if codec.header:
        lines.append(codec.delimiter.join(c.name for c in mapping.columns))
    for row in rows:
        lines.append(codec.delimiter.join(
            field(c.type, v) for c, v in zip(mapping.columns, row, strict=True)))
    text = "".join(line + codec.line_terminator for line in lines)
    return (b"\xef\xbb\xbf" if codec.bom else b"") + text.encode("utf-8")


def reference_objects(mapping: PayloadMapping, rows: Sequence[Sequence[Any]],
                      codec: JsonCodec) -> list[str]:
    """Each row as json.dumps renders it, with the documented value rules."""
    out = []
    for row in rows:
        document: dict[str, Any] = {}
        for column, value in zip(mapping.columns, row, strict=True):
            if value is None:
                if codec.null == "explicit_null":
                    document[column.name] = None
            elif column.type in ("date", "timestamp"):
                document[column.name] = scalar_text(column.type, value, codec.timestamp_precision)
            else:
                document[column.name] = value
        out.append(json.dumps(document, ensure_ascii=codec.non_ascii == "escape",
                              separators=(",", ":"), allow_nan=False))
    return out


def reference_ndjson(mapping: PayloadMapping, rows: Sequence[Sequence[Any]], codec: JsonCodec) -> bytes:
    return "".join(o + "\n" for o in reference_objects(mapping, rows, codec)).encode("utf-8")


def reference_json_array(mapping: PayloadMapping, rows: Sequence[Sequence[Any]],
                         codec: JsonCodec) -> bytes:
    return ("[" + ",".join(reference_objects(mapping, rows, codec)) + "]").encode("utf-8")


# -- independent readers ----------------------------------------------------------------------

def read_csv(data: bytes, mapping: PayloadMapping, codec: CsvCodec, unit: str = "ms") -> pa.Table:
    """pyarrow's CSV reader with the mapping's types; quoted fields are never null."""
    if codec.bom:
        assert data.startswith(b"\xef\xbb\xbf")
        data = data[3:]
    return pcsv.read_csv(
        io.BytesIO(data),
        read_options=pcsv.ReadOptions(use_threads=False,
                                      column_names=None if codec.header else
                                      [c.name for c in mapping.columns]),
        parse_options=pcsv.ParseOptions(delimiter=codec.delimiter, quote_char='"',
                                        double_quote=True, newlines_in_values=True),
        convert_options=pcsv.ConvertOptions(
            column_types=schema_of(mapping, unit), null_values=[codec.null],
            strings_can_be_null=True, quoted_strings_can_be_null=False,
            true_values=["true"], false_values=["false"]),
    )


def parse_multipart(body: bytes, boundary: str) -> list[tuple[dict[str, str], bytes]]:
    """Split a multipart body into (headers, content) pairs, strictly per RFC 2046 framing."""
    delimiter = b"--" + boundary.encode("ascii")
    assert body.startswith(delimiter + b"\r\n"), "no preamble expected"
    assert body.endswith(b"\r\n" + delimiter + b"--\r\n")
    inner = body[len(delimiter) + 2: -(len(delimiter) + 6)]
    parts = []
    for raw in inner.split(b"\r\n" + delimiter + b"\r\n"):
        head, _, content = raw.partition(b"\r\n\r\n")
        headers = {}
        for line in head.split(b"\r\n"):
            name, _, value = line.decode("ascii").partition(": ")
            headers[name] = value
        parts.append((headers, content))
    return parts


# -- hypothesis strategies --------------------------------------------------------------------

_ALPHABET = st.one_of(
    st.sampled_from(list(',;|\t"\r\n\\ \x00\x01\x1f\x7fаЯё€😀\u2028')),  # noqa: RUF001
    st.characters(codec="utf-8"),
)
_MIN_MS = int(dt.datetime(1, 1, 1, tzinfo=UTC).timestamp() * 1000)
_MAX_MS = int(dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC).timestamp() * 1000)


def values(kind: str) -> st.SearchStrategy[Any]:
    if kind == "string":
        return st.text(_ALPHABET, max_size=8)
    if kind == "int64":
        return st.integers(-(2**63), 2**63 - 1)
    if kind == "float64":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "bool":
        return st.booleans()
    if kind == "date":
        return st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))
    return st.integers(_MIN_MS, _MAX_MS).map(
        lambda ms: dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=ms))


@st.composite
def tables(draw: st.DrawFn, max_rows: int = 12) -> tuple[PayloadMapping, list[list[Any]]]:
    """A random mapping (1-6 columns of any type) and rows for it, nulls included."""
    kinds = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=6))
    nullable = draw(st.lists(st.booleans(), min_size=len(kinds), max_size=len(kinds)))
    pairs = list(zip(kinds, nullable, strict=True))
    mapping = mapping_of(*[(f"c{i}_{k}", k, n) for i, (k, n) in enumerate(pairs)])
    row = st.tuples(*[st.none() | values(k) if n else values(k) for k, n in pairs])
    rows = draw(st.lists(row, max_size=max_rows))
    return mapping, [list(r) for r in rows]


# One edge-case table shape for every row codec: each type, and the rows every codec must carry.
EDGE_MAPPING = mapping_of(("s", "string"), ("i", "int64"), ("f", "float64"), ("b", "bool"),
                          ("d", "date"), ("t", "timestamp"))
T0 = dt.datetime(2026, 8, 1, 0, 0, 1, 601000, tzinfo=UTC)
EDGE_ROWS: list[list[Any]] = [
    ["plain", 0, 0.1, True, dt.date(2026, 8, 1), T0],
    ["", -(2**63), 1e-300, False, dt.date(1, 1, 1), dt.datetime(1, 1, 1, tzinfo=UTC)],
    [None, 2**63 - 1, -0.0, None, None, None],
]
