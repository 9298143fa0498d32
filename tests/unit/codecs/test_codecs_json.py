"""NDJSON and JSON array: json.dumps-equal bytes, round trips, null policy, Unicode policy."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpone.codecs import PayloadEncodingError, encode_json_array, encode_ndjson
from dpone.contracts.profile import JsonCodec
from support.codec_reference import (
    EDGE_MAPPING,
    EDGE_ROWS,
    T0,
    mapping_of,
    reference_json_array,
    reference_ndjson,
    split,
    stamp,
    table_of,
    tables,
)

UTC = dt.UTC
MAPPING = EDGE_MAPPING
ROWS: list[list[Any]] = [
    *EDGE_ROWS,
    ['say "hi", \\ ok', None, 1e16, True, dt.date(9999, 12, 31), T0],
    ["line\nbreak\r\ttab\x00\x1f\x7f\b\f", 42, None, False, dt.date(2024, 2, 29), T0],
    ["Москва-Север 😀 \u2028 é", -1, 123456.789, True, dt.date(2026, 8, 31), T0],
]
TABLE = table_of(MAPPING, ROWS)
CODECS = [JsonCodec(), JsonCodec(null="omit"), JsonCodec(non_ascii="escape"),
          JsonCodec(null="omit", non_ascii="escape", timestamp_precision="us")]


DEFAULT = JsonCodec()


def ndjson(table: Any, codec: JsonCodec = DEFAULT, mapping: Any = MAPPING) -> bytes:
    return b"".join(encode_ndjson(table, mapping, codec))


def json_array(table: Any, codec: JsonCodec = DEFAULT, mapping: Any = MAPPING) -> bytes:
    return b"".join(encode_json_array(table, mapping, codec))


def test_exact_bytes() -> None:
    assert ndjson(TABLE.slice(0, 3)) == (
        b'{"s":"plain","i":0,"f":0.1,"b":true,"d":"2026-08-01","t":"2026-08-01T00:00:01.601Z"}\n'
        b'{"s":"","i":-9223372036854775808,"f":1e-300,"b":false,"d":"0001-01-01",'
        b'"t":"0001-01-01T00:00:00.000Z"}\n'
        b'{"s":null,"i":9223372036854775807,"f":-0.0,"b":null,"d":null,"t":null}\n'
    )
    assert ndjson(TABLE.slice(2, 1), JsonCodec(null="omit")) == b'{"i":9223372036854775807,"f":-0.0}\n'
    assert json_array(TABLE.slice(2, 1), JsonCodec(null="omit")) == b'[{"i":9223372036854775807,"f":-0.0}]'


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: repr(c.model_dump(exclude_defaults=True)))
def test_bytes_equal_json_dumps_and_read_back(codec: JsonCodec) -> None:
    data = ndjson(TABLE, codec)
    assert data == reference_ndjson(MAPPING, ROWS, codec)
    assert json_array(TABLE, codec) == reference_json_array(MAPPING, ROWS, codec)
    if codec.non_ascii == "escape":
        assert data.isascii()
    decoded = [json.loads(line) for line in data.split(b"\n")[:-1]]  # not str.splitlines: U+2028
    assert json.loads(json_array(TABLE, codec)) == decoded
    for row, document in zip(ROWS, decoded, strict=True):
        for column, value in zip(MAPPING.columns, row, strict=True):
            if value is None:
                assert document.get(column.name, "absent") == (
                    None if codec.null == "explicit_null" else "absent")
            elif column.type == "timestamp":
                assert document[column.name] == stamp(value, codec.timestamp_precision)
            elif column.type == "date":
                assert dt.date.fromisoformat(document[column.name]) == value
            else:
                assert repr(document[column.name]) == repr(value)


def test_empty_input() -> None:
    assert ndjson(TABLE.slice(0, 0)) == b""
    assert json_array(TABLE.slice(0, 0)) == b"[]"
    assert json_array([]) == b"[]"


def test_omitted_leading_fields_leave_no_stray_comma() -> None:
    mapping = mapping_of(("a", "int64"), ("b", "string"), ("c", "bool"))
    rows: list[list[Any]] = [[None, None, None], [None, "x", None], [1, None, True], [None, None, False]]
    table = table_of(mapping, rows)
    codec = JsonCodec(null="omit")
    assert ndjson(table, codec, mapping) == b'{}\n{"b":"x"}\n{"a":1,"c":true}\n{"c":false}\n'
    assert json_array(table, codec, mapping) == b'[{},{"b":"x"},{"a":1,"c":true},{"c":false}]'


def test_nan_is_refused() -> None:
    mapping = mapping_of(("f", "float64"))
    with pytest.raises(PayloadEncodingError, match="NaN") as caught:
        json_array(pa.table({"f": [0.5, float("nan")]}), mapping=mapping)
    assert caught.value.row == 1


codecs = st.builds(JsonCodec, non_ascii=st.sampled_from(["raw_utf8", "escape"]),
                   null=st.sampled_from(["explicit_null", "omit"]))


@settings(max_examples=120, deadline=None)
@given(tables(), codecs, st.lists(st.integers(0, 12), max_size=5), st.integers(1, 5))
def test_bytes_follow_the_rules_for_any_table_and_any_batching(
    table: tuple[Any, list[list[Any]]], codec: JsonCodec, cuts: list[int], slice_rows: int
) -> None:
    mapping, rows = table
    arrow = table_of(mapping, rows)
    expected_lines = reference_ndjson(mapping, rows, codec)
    expected_array = reference_json_array(mapping, rows, codec)
    assert ndjson(arrow, codec, mapping) == expected_lines
    assert json_array(arrow, codec, mapping) == expected_array
    with mock.patch("dpone.codecs._columns.SLICE_ROWS", slice_rows):
        batches = split(arrow, cuts)
        assert ndjson(batches, codec, mapping) == expected_lines
        assert json_array(batches, codec, mapping) == expected_array
