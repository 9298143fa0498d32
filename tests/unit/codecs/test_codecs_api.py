"""The public surface of dpone.codecs, format dispatch, and the module size budget."""

from __future__ import annotations

import pickle
import re
import zlib
from unittest import mock

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dpone.codecs
from dpone.codecs import (
    CODEC_VERSION,
    PayloadEncodingError,
    _columns,
    codec_libraries,
    compress,
    encode_csv,
    encode_json_array,
    encode_ndjson,
    encode_rows,
    gzip_stream,
)
from dpone.contracts.profile import Codec, PayloadFormat
from support.codec_reference import mapping_of
from support.common import ROOT

MAPPING = mapping_of(("s", "string"), ("n", "int64"))
TABLE = pa.table({"s": ["a", None], "n": [1, 2]})


def test_exported_names_are_pinned() -> None:
    assert sorted(dpone.codecs.__all__) == [
        "BLOCK_BYTES", "BOUNDARY_PREFIX", "CODEC_VERSION", "Measurement", "MultipartEnvelope",
        "PayloadEncodingError", "PayloadIntegrityError", "RowFrame", "SLICE_ROWS",
        "codec_libraries", "compress", "encode_csv", "encode_json_array", "encode_ndjson",
        "encode_rows", "gzip_header", "gzip_stream", "measure", "raw_stream", "row_frame",
        "row_texts",
    ]
    for name in dpone.codecs.__all__:
        assert hasattr(dpone.codecs, name)


@pytest.mark.parametrize(("fmt", "direct"), [
    ("csv", lambda codec: encode_csv(TABLE, MAPPING, codec.csv)),
    ("ndjson", lambda codec: encode_ndjson(TABLE, MAPPING, codec.json_codec)),
    ("json_array", lambda codec: encode_json_array(TABLE, MAPPING, codec.json_codec)),
])
def test_encode_rows_and_compress_dispatch_on_the_payload_format(fmt: str, direct: object) -> None:
    codec = Codec()
    plain = PayloadFormat(format=fmt, compression="none", content_type="text/plain")
    zipped = PayloadFormat(format=fmt, compression="gzip", content_type="application/gzip")
    expected = b"".join(direct(codec))  # type: ignore[operator]
    assert b"".join(encode_rows(TABLE, MAPPING, plain, codec)) == expected
    assert b"".join(compress(encode_rows(TABLE, MAPPING, plain, codec), plain, codec)) == expected
    assert b"".join(compress([expected], zipped, codec)) == b"".join(gzip_stream([expected], codec.gzip))


def test_raw_is_not_a_row_format() -> None:
    raw = PayloadFormat(format="raw", content_type="application/octet-stream")
    with pytest.raises(PayloadEncodingError, match="raw_stream"):
        encode_rows(TABLE, MAPPING, raw, Codec())


def test_errors_carry_field_evidence_and_pickle() -> None:
    error = PayloadEncodingError("bad value", column="reading", row=17)
    assert str(error) == "column 'reading', row 17: bad value"
    again = pickle.loads(pickle.dumps(error))
    assert (again.reason, again.column, again.row) == ("bad value", "reading", 17)


def test_codec_and_mapping_problems_raise_before_any_chunk() -> None:
    with pytest.raises(PayloadEncodingError):
        encode_csv(TABLE, mapping_of(("n", "int64")), Codec().csv)  # one nullable column, null ""


def test_modules_stay_within_the_size_budget() -> None:
    not_code = re.compile(r"^\s*($|#)")
    for path in sorted((ROOT / "dpone" / "codecs").glob("*.py")):
        lines = path.read_text("utf-8").splitlines()
        assert sum(1 for line in lines if not not_code.match(line)) <= 400, path.name


def test_library_versions_are_reported() -> None:
    versions = codec_libraries()
    assert versions["rules"] == CODEC_VERSION == "dpone.codecs.v1"
    assert versions["pyarrow"] == pa.__version__
    assert versions["zlib"] == zlib.ZLIB_RUNTIME_VERSION


def test_a_pyarrow_that_renders_text_differently_is_refused() -> None:
    _columns.probe_arrow_text.cache_clear()
    try:
        with mock.patch.object(_columns, "format_float", lambda v: pc.cast(v, pa.large_string())), \
                pytest.raises(RuntimeError, match="not supported for sealing"):
            encode_csv(TABLE, MAPPING, Codec().csv)
    finally:
        _columns.probe_arrow_text.cache_clear()
