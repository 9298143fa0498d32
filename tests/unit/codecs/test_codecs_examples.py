"""The sample dataset: an independent generator's bytes reproduced, and pinned golden digests.

examples/data/measurements.csv is written by examples/generate_measurements.py, a separate
per-row implementation of the same dialect with every string quoted; reading it with the
mapping's types and encoding it with ``quoting: all_strings`` must give its bytes back.
The digests below pin the sealed bytes of the first 500 rows under the example profiles'
codecs: a change is a change of payload identity and must be reviewed as such.
"""

from __future__ import annotations

import hashlib
import io
import json
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
from ruamel.yaml import YAML

from dpone.codecs import MultipartEnvelope, compress, encode_csv, encode_rows, measure
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.profile import CsvCodec, OperationProfile
from support.codec_reference import read_csv, reference_csv, reference_ndjson, schema_of
from support.common import EXAMPLES

GOLDEN_CSV_SHA256 = "dc45c744ab7c2986e3927343b849011137d9e505383e074ad06c2b0c60c0065c"
GOLDEN_CSV_GZIP_SHA256 = "b74126918c0d64e122c4189c3d3c9372e9f9daec2c6a59286a0685dacf94274a"
GOLDEN_NDJSON_SHA256 = "dc80eb79e3c4bd97527cfc0f778f40f811d2908747270824f24088c2f3ee5780"
GOLDEN_BOUNDARY = "dpone-26e4bc57edc531e9a17b325e18dc8376"
GOLDEN_WIRE_BYTES = 10_462


def load(model: type, path: Path) -> object:
    document = YAML(typ="safe").load(path.read_text("utf-8"))
    return model.model_validate_json(json.dumps(document))  # type: ignore[attr-defined]


MAPPING: PayloadMapping = load(PayloadMapping, EXAMPLES / "mappings" / "mock.measurements.v1.yaml")  # type: ignore[assignment]
JOBS: OperationProfile = load(OperationProfile, EXAMPLES / "profiles" / "mock.dataset-jobs@1.yaml")  # type: ignore[assignment]
BATCH: OperationProfile = load(OperationProfile, EXAMPLES / "profiles" / "mock.batch-ndjson@1.yaml")  # type: ignore[assignment]
SOURCE = (EXAMPLES / "data" / "measurements.csv").read_bytes()


def source_table() -> pa.Table:
    return pcsv.read_csv(io.BytesIO(SOURCE), convert_options=pcsv.ConvertOptions(
        column_types=schema_of(MAPPING), strings_can_be_null=True, quoted_strings_can_be_null=False,
        true_values=["true"], false_values=["false"]))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_all_strings_quoting_reproduces_the_generators_bytes() -> None:
    table = source_table()
    assert table.num_rows == SOURCE.count(b"\n") - 1
    assert b"".join(encode_csv(table, MAPPING, CsvCodec(quoting="all_strings"))) == SOURCE


def test_profile_dialect_reads_back_as_the_source() -> None:
    table = source_table()
    data = b"".join(encode_csv(table.to_batches(max_chunksize=97), MAPPING, JOBS.codec.csv))
    assert read_csv(data, MAPPING, JOBS.codec.csv).to_pylist() == table.to_pylist()


def test_golden_digests_of_the_first_500_rows() -> None:
    rows = source_table().slice(0, 500)
    fmt = JOBS.request.body.payload_format
    decoded_stream, decoded = measure(encode_rows(rows, MAPPING, fmt, JOBS.codec))
    sealed = b"".join(compress(decoded_stream, fmt, JOBS.codec))
    ndjson = b"".join(encode_rows(rows, MAPPING, BATCH.request.body.payload_format, BATCH.codec))
    envelope = MultipartEnvelope(
        payload_name="file", filename="mock.measurements-0001.csv.gz", content_type=fmt.content_type,
        scalar_parts=[("range_start", "2026-08-01"), ("range_end", "2026-08-05")],
        payload_size=len(sealed), payload_digest="sha256:" + sha256(sealed), payload=lambda: [sealed])
    # The pins were cross-checked against the independent per-row oracles and stdlib zlib.
    plain = rows.to_pylist()
    listed = [[row[c.name] for c in MAPPING.columns] for row in plain]
    assert sha256(reference_csv(MAPPING, listed, JOBS.codec.csv)) == GOLDEN_CSV_SHA256
    assert sha256(reference_ndjson(MAPPING, listed, BATCH.codec.json_codec)) == GOLDEN_NDJSON_SHA256
    assert zlib.decompress(sealed, wbits=31) == reference_csv(MAPPING, listed, JOBS.codec.csv)
    assert decoded.size == len(zlib.decompress(sealed, wbits=31))
    assert decoded.sha256 == GOLDEN_CSV_SHA256
    assert sha256(sealed) == GOLDEN_CSV_GZIP_SHA256
    assert sha256(ndjson) == GOLDEN_NDJSON_SHA256
    assert (envelope.boundary, envelope.content_length) == (GOLDEN_BOUNDARY, GOLDEN_WIRE_BYTES)
