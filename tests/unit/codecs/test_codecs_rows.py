"""Row texts: the frame around any run of row texts is exactly the payload encode_rows writes."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpone.codecs import PayloadEncodingError, encode_rows, row_frame, row_texts
from dpone.codecs._arrow import text_bytes
from dpone.contracts.profile import Codec, CsvCodec, JsonCodec, PayloadFormat
from support.codec_reference import (
    EDGE_MAPPING,
    EDGE_ROWS,
    mapping_of,
    reference_csv,
    reference_json_array,
    reference_ndjson,
    table_of,
    tables,
)

FORMATS = ("csv", "ndjson", "json_array")
CODECS = st.builds(
    Codec,
    csv=st.sampled_from([CsvCodec(), CsvCodec(bom=True, quoting="all_strings", null="NULL"),
                         CsvCodec(header=False, delimiter=";", line_terminator="\r\n")]),
    json_codec=st.sampled_from([JsonCodec(), JsonCodec(null="omit"),
                                JsonCodec(non_ascii="escape", timestamp_precision="us")]))


def _payload(fmt: str) -> PayloadFormat:
    return PayloadFormat(format=fmt, content_type="text/plain")  # type: ignore[arg-type]


def _framed(table: Any, mapping: Any, fmt: str, codec: Codec) -> bytes:
    """The payload rebuilt from the frame and the row texts, as the sealer assembles it."""
    frame = row_frame(mapping, _payload(fmt), codec)
    texts = b"".join(text_bytes(array) for array in row_texts(table, mapping, _payload(fmt), codec))
    return frame.head + texts[frame.lead if table.num_rows else 0:] + frame.tail


def _reference(fmt: str, mapping: Any, rows: list[list[Any]], codec: Codec) -> bytes:
    if fmt == "csv":
        return reference_csv(mapping, rows, codec.csv)
    if fmt == "ndjson":
        return reference_ndjson(mapping, rows, codec.json_codec)
    return reference_json_array(mapping, rows, codec.json_codec)


@settings(max_examples=150, deadline=None)
@given(tables(), CODECS, st.sampled_from(FORMATS), st.integers(0, 12), st.integers(0, 12))
def test_any_row_interval_framed_equals_encode_rows_and_the_reference(
        table: tuple[Any, list[list[Any]]], codec: Codec, fmt: str, start: int, length: int
) -> None:
    mapping, rows = table
    if fmt == "csv" and len(mapping.columns) == 1 and mapping.columns[0].nullable:
        codec = codec.model_copy(update={"csv": CsvCodec(null="NULL")})  # a visible one-column null
    arrow = table_of(mapping, rows)
    start = min(start, len(rows))
    part = arrow.slice(start, length)
    expected = b"".join(encode_rows(part, mapping, _payload(fmt), codec))
    assert _framed(part, mapping, fmt, codec) == expected
    assert expected == _reference(fmt, mapping, rows[start:start + length], codec)


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_text_is_one_row(fmt: str) -> None:
    table = table_of(EDGE_MAPPING, EDGE_ROWS)
    arrays = list(row_texts(table, EDGE_MAPPING, _payload(fmt), Codec()))
    assert sum(len(array) for array in arrays) == len(EDGE_ROWS)
    assert all(array.type == pa.large_string() and not array.null_count for array in arrays)
    lone = [_framed(table.slice(i, 1), EDGE_MAPPING, fmt, Codec()) for i in range(len(EDGE_ROWS))]
    assert lone == [b"".join(encode_rows(table.slice(i, 1), EDGE_MAPPING, _payload(fmt), Codec()))
                    for i in range(len(EDGE_ROWS))]


def test_frames_and_refusals_match_encode_rows() -> None:
    mapping = mapping_of(("s", "string", False), ("f", "float64"))
    assert row_frame(mapping, _payload("csv"), Codec(csv=CsvCodec(bom=True))).head == \
        b"\xef\xbb\xbfs,f\n"
    assert row_frame(mapping, _payload("json_array"), Codec()) == row_frame(
        mapping, _payload("json_array"), Codec()).__class__(b"[", b"]", 1)
    bad = pa.table({"s": ["a", None], "f": [1.0, float("nan")]},
                   schema=pa.schema([("s", pa.string()), ("f", pa.float64())]))
    for fmt in FORMATS:
        with pytest.raises(PayloadEncodingError) as direct:
            b"".join(encode_rows(bad, mapping, _payload(fmt), Codec()))
        with pytest.raises(PayloadEncodingError) as texts:
            list(row_texts(bad, mapping, _payload(fmt), Codec()))
        assert (texts.value.column, texts.value.row) == (direct.value.column, direct.value.row)
    raw = PayloadFormat(format="raw", content_type="application/octet-stream")
    with pytest.raises(PayloadEncodingError, match="raw_stream"):
        row_frame(mapping, raw, Codec())
