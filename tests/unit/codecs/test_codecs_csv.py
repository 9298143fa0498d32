"""CSV: exact bytes, round trips through pyarrow's reader, quoting, tokens, refusals."""

from __future__ import annotations

import datetime as dt
from typing import Any
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpone.codecs import PayloadEncodingError, encode_csv
from dpone.contracts.profile import CsvCodec
from support.codec_reference import (
    EDGE_MAPPING,
    EDGE_ROWS,
    T0,
    mapping_of,
    read_csv,
    reference_csv,
    split,
    table_of,
    tables,
)

UTC = dt.UTC
TRICKY = EDGE_MAPPING
ROWS: list[list[Any]] = [
    *EDGE_ROWS,
    ['say "hi", ok', None, 1e16, True, dt.date(9999, 12, 31),
     dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)],
    ["line\nbreak\r\nand a lone CR\r", 42, None, False, dt.date(2024, 2, 29), T0],
    ["Москва-Север; замена батареи", -1, 123456.789, True, dt.date(2026, 8, 31), T0],
    [",", 7, 1.0, False, dt.date(2000, 1, 1), T0],
    ['"', 8, -2.5e-7, True, dt.date(2000, 1, 1), T0],
    ["  leading and trailing  ", 9, 3.0, True, dt.date(2000, 1, 1), T0],
    ["tab\there|pipe", 10, 0.5, True, dt.date(2000, 1, 1), T0],
    ["😀 \u2028 \\ \x00\x1f", 11, 0.25, False, dt.date(2000, 1, 1), T0],
]
TABLE = table_of(TRICKY, ROWS)

CODECS = [
    CsvCodec(),
    CsvCodec(quoting="all_strings"),
    CsvCodec(delimiter=";", line_terminator="\r\n", bom=True),
    CsvCodec(delimiter="\t", quoting="all_strings", line_terminator="\r\n"),
    CsvCodec(delimiter="|", header=False),
    CsvCodec(null="\\N", empty_string=""),
    CsvCodec(null="NULL"),
    CsvCodec(timestamp_precision="us"),
]


DEFAULT = CsvCodec()


def encode(table: Any, codec: CsvCodec = DEFAULT, mapping: Any = TRICKY) -> bytes:
    return b"".join(encode_csv(table, mapping, codec))


def as_rows(table: pa.Table) -> list[str]:
    """Rows as repr text: keeps -0.0 apart from 0.0 and tz-aware datetimes exact."""
    return [repr(row) for row in table.to_pylist()]


def test_exact_bytes_of_the_default_dialect() -> None:
    mapping = mapping_of(("s", "string"), ("n", "int64"), ("t", "timestamp"), ("ok", "bool"))
    table = table_of(mapping, [["a,b", 1, T0, True], ["", None, T0, False], [None, -3, T0, True],
                               ['q"', 0, T0, False], ["Ёж", 5, T0, True]])
    assert encode(table, mapping=mapping) == (
        "s,n,t,ok\n"
        '"a,b",1,2026-08-01T00:00:01.601Z,true\n'
        '"",,2026-08-01T00:00:01.601Z,false\n'
        ",-3,2026-08-01T00:00:01.601Z,true\n"
        '"q""",0,2026-08-01T00:00:01.601Z,false\n'
        "Ёж,5,2026-08-01T00:00:01.601Z,true\n"
    ).encode()


def test_all_strings_bom_and_crlf() -> None:
    mapping = mapping_of(("s", "string"), ("n", "int64"))
    table = table_of(mapping, [["x", 1], ["", 2], [None, None]])
    codec = CsvCodec(quoting="all_strings", bom=True, line_terminator="\r\n", delimiter=";")
    assert encode(table, codec, mapping) == b'\xef\xbb\xbfs;n\r\n"x";1\r\n"";2\r\n;\r\n'


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: repr(c.model_dump(exclude_defaults=True)))
def test_round_trip_through_pyarrow_reader(codec: CsvCodec) -> None:
    data = encode(TABLE, codec)
    assert data == reference_csv(TRICKY, ROWS, codec)
    back = read_csv(data, TRICKY, codec, unit=codec.timestamp_precision)
    expected = TABLE if codec.timestamp_precision == "ms" else TABLE.cast(
        pa.schema([*list(TABLE.schema)[:-1], pa.field("t", pa.timestamp("us", tz="UTC"))]))
    assert as_rows(back) == as_rows(expected)


def test_needed_quoting_quotes_only_what_needs_it() -> None:
    text = encode(TABLE).decode("utf-8")
    assert "\nplain,0," in text
    assert "\nМосква-Север; замена батареи,-1," in text  # noqa: RUF001 (";" is no delimiter here)
    assert '\n"",-9223372036854775808,' in text  # empty string: the quoted empty field
    assert "\n,9223372036854775807,-0.0,,," in text  # nulls: nothing
    assert '\n"say ""hi"", ok",,1e+16,' in text
    assert '\n"line\nbreak\r\nand a lone CR\r",42,' in text
    assert "\n  leading and trailing  ,9," in text
    assert "\ntab\there|pipe,10," in text


def test_a_string_equal_to_a_bare_token_is_quoted() -> None:
    mapping = mapping_of(("s", "string"), ("n", "int64"))
    table = table_of(mapping, [["NULL", 1], [None, 2], ["", 3]])
    assert encode(table, CsvCodec(null="NULL"), mapping) == b's,n\n"NULL",1\nNULL,2\n"",3\n'
    codec = CsvCodec(null="\\N", empty_string="")
    table = table_of(mapping, [["\\N", 1], [None, 2], ["", 3]])
    assert encode(table, codec, mapping) == b's,n\n"\\N",1\n\\N,2\n,3\n'


@pytest.mark.parametrize(("kind", "token"), [("int64", "0"), ("bool", "true"), ("float64", "1.5"),
                                             ("date", "2026-08-01")])
def test_a_null_token_that_a_typed_value_can_produce_is_refused(kind: str, token: str) -> None:
    mapping = mapping_of(("s", "string"), ("x", kind))
    with pytest.raises(PayloadEncodingError, match="also a valid"):
        encode_csv(pa.table({"s": pa.array([], pa.string())}), mapping, CsvCodec(null=token))


@pytest.mark.parametrize("codec", [CsvCodec(null="a,b"), CsvCodec(null='"x'),
                                   CsvCodec(null='""', empty_string=""),
                                   CsvCodec(delimiter=";", empty_string="e;")])
def test_structural_tokens_are_refused(codec: CsvCodec) -> None:
    with pytest.raises(PayloadEncodingError, match="token"):
        encode_csv([], TRICKY, codec)


def test_empty_input_is_the_header_alone() -> None:
    empty = TABLE.slice(0, 0)
    assert encode(empty) == b"s,i,f,b,d,t\n"
    assert encode(empty, CsvCodec(header=False, bom=True)) == b"\xef\xbb\xbf"
    assert encode([], CsvCodec(header=False)) == b""


def test_timestamp_precision_and_units() -> None:
    mapping = mapping_of(("t", "timestamp", False))
    moment = dt.datetime(2026, 8, 1, 12, 30, 45, 123456, tzinfo=UTC)
    micro = table_of(mapping, [[moment]], unit="us")
    assert encode(micro, CsvCodec(timestamp_precision="us", header=False), mapping) == \
        b"2026-08-01T12:30:45.123456Z\n"
    milli = table_of(mapping, [[moment.replace(microsecond=123000)]], unit="ms")
    assert encode(milli, CsvCodec(timestamp_precision="us", header=False), mapping) == \
        b"2026-08-01T12:30:45.123000Z\n"
    whole = table_of(mapping, [[moment.replace(microsecond=0)]], unit="ns")
    assert encode(whole, CsvCodec(timestamp_precision="s", header=False), mapping) == \
        b"2026-08-01T12:30:45Z\n"


def test_sub_precision_digits_are_refused_not_truncated() -> None:
    mapping = mapping_of(("t", "timestamp"))
    ok = dt.datetime(2026, 8, 1, 0, 0, 0, 5000, tzinfo=UTC)
    table = table_of(mapping, [[ok], [None], [ok.replace(microsecond=5001)]], unit="us")
    with pytest.raises(PayloadEncodingError, match="finer than the codec precision 'ms'") as caught:
        encode(table, CsvCodec(null="NULL"), mapping)
    assert (caught.value.column, caught.value.row) == ("t", 2)


def test_schema_must_be_the_mapping() -> None:
    mapping = mapping_of(("a", "string"), ("b", "int64"))
    with pytest.raises(PayloadEncodingError, match="mapping order"):
        encode(pa.table({"b": [1], "a": ["x"]}), mapping=mapping)
    with pytest.raises(PayloadEncodingError, match="does not carry") as caught:
        encode(pa.table({"a": ["x"], "b": pa.array([1], pa.int32())}), mapping=mapping)
    assert caught.value.column == "b"
    stamps = mapping_of(("t", "timestamp", False))
    for arrow_type in (pa.timestamp("ms"), pa.timestamp("ms", tz="Europe/Moscow")):
        with pytest.raises(PayloadEncodingError, match="does not carry"):
            encode(pa.table({"t": pa.array([0], arrow_type)}), mapping=stamps)


def test_null_in_a_non_nullable_column_is_refused_with_its_row() -> None:
    mapping = mapping_of(("a", "string", False), ("b", "int64", False))
    table = table_of(mapping, [["x", 1], ["y", 2], ["z", None]])
    with pytest.raises(PayloadEncodingError, match="not nullable") as caught:
        encode(table.to_batches(max_chunksize=1), mapping=mapping)
    assert (caught.value.column, caught.value.row) == ("b", 2)


def test_years_outside_0001_9999_are_refused() -> None:
    mapping = mapping_of(("d", "date", False))
    days = pa.array([0, 2_932_897], pa.int32()).cast(pa.date32())  # 1970-01-01, 10000-01-01
    with pytest.raises(PayloadEncodingError, match="0001-9999") as caught:
        encode(pa.table({"d": days}), mapping=mapping)
    assert caught.value.row == 1


def test_invalid_utf8_is_refused_with_its_row() -> None:
    mapping = mapping_of(("s", "string", False))
    data = pa.py_buffer(b"okbad\xff")
    offsets = pa.py_buffer(pa.array([0, 2, 6], pa.int32()).buffers()[1].to_pybytes())
    broken = pa.Array.from_buffers(pa.string(), 2, [None, offsets, data])
    with pytest.raises(PayloadEncodingError, match="UTF-8") as caught:
        encode(pa.table({"s": broken}), mapping=mapping)
    assert caught.value.row == 1


def test_large_string_input_is_accepted() -> None:
    mapping = mapping_of(("s", "string"), ("n", "int64"))
    table = pa.table({"s": pa.array(["a,b", "", None], pa.large_string()), "n": [1, 2, 3]})
    assert encode(table, mapping=mapping) == b's,n\n"a,b",1\n"",2\n,3\n'


def test_many_slices_equal_one_pass() -> None:
    mapping = mapping_of(("s", "string"), ("n", "int64"), ("f", "float64"))
    rows = [[("x," if n % 7 == 0 else "y") * (n % 3), n, n / 8] for n in range(70_000)]
    table = table_of(mapping, rows)
    data = encode(table, mapping=mapping)
    assert data == reference_csv(mapping, rows, CsvCodec())
    assert encode(split(table, [1, 65_535, 65_537, 69_999]), mapping=mapping) == data


def refused_as_empty_lines(mapping: Any, codec: CsvCodec) -> bool:
    """One nullable column with the empty null token: refused (a null row is an empty line)."""
    if len(mapping.columns) == 1 and mapping.columns[0].nullable and not codec.null:
        with pytest.raises(PayloadEncodingError, match="empty line"):
            encode_csv([], mapping, codec)
        return True
    return False


def test_a_one_column_row_is_never_an_empty_line() -> None:
    mapping = mapping_of(("s", "string"))
    with pytest.raises(PayloadEncodingError, match="empty line"):
        encode_csv([], mapping, CsvCodec())
    with pytest.raises(PayloadEncodingError, match="empty line"):
        encode_csv([], mapping, CsvCodec(null="NULL", empty_string=""))
    table = pa.table({"s": pa.array(["", None, "x"])})
    assert encode(table, CsvCodec(null="NULL"), mapping) == b's\n""\nNULL\nx\n'
    strict = mapping_of(("n", "int64", False))
    assert encode(pa.table({"n": [1]}), CsvCodec(), strict) == b"n\n1\n"


codecs = st.builds(
    CsvCodec,
    bom=st.booleans(),
    delimiter=st.sampled_from([",", ";", "\t", "|"]),
    quoting=st.sampled_from(["needed", "all_strings"]),
    line_terminator=st.sampled_from(["\n", "\r\n"]),
    header=st.booleans(),
    timestamp_precision=st.just("ms"),
)


@settings(max_examples=120, deadline=None)
@given(tables(), codecs, st.lists(st.integers(0, 12), max_size=5), st.integers(1, 5))
def test_bytes_follow_the_rules_for_any_table_and_any_batching(
    table: tuple[Any, list[list[Any]]], codec: CsvCodec, cuts: list[int], slice_rows: int
) -> None:
    mapping, rows = table
    arrow = table_of(mapping, rows)
    if refused_as_empty_lines(mapping, codec):
        return
    expected = reference_csv(mapping, rows, codec)
    assert encode(arrow, codec, mapping) == expected
    with mock.patch("dpone.codecs._columns.SLICE_ROWS", slice_rows):
        assert encode(split(arrow, cuts), codec, mapping) == expected


@settings(max_examples=80, deadline=None)
@given(tables(), codecs)
def test_pyarrow_reads_back_the_source_rows(table: tuple[Any, list[list[Any]]], codec: CsvCodec) -> None:
    mapping, rows = table
    arrow = table_of(mapping, rows)
    if refused_as_empty_lines(mapping, codec):
        return
    if not codec.header and not rows:
        return  # nothing to read: pyarrow needs at least one line to infer the column count
    back = read_csv(encode(arrow, codec, mapping), mapping, codec)
    assert as_rows(back) == as_rows(arrow)
