"""`--sample K` decodes the first records of a payload as the profile's codec wrote them, reading
only as much of the payload as those records need."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator

import pytest

import dpone.executor.payload_sample as sampling
from dpone.contracts import DponeError
from dpone.contracts.profile import CsvCodec, PayloadFormat
from dpone.executor.payload_sample import first_records

CSV = PayloadFormat(format="csv", compression="none", content_type="text/csv")
CSV_GZ = PayloadFormat(format="csv", compression="gzip", content_type="application/gzip")
NDJSON = PayloadFormat(format="ndjson", compression="none", content_type="application/x-ndjson")
ARRAY = PayloadFormat(format="json_array", compression="none", content_type="application/json")
RAW = PayloadFormat(format="raw", compression="none", content_type="application/octet-stream")
NAMES = ("day", "sensor", "note")

TEXT = ('day,sensor,note\n'
        '2026-09-01,s-1,"Привет, мир"\n'
        '2026-09-01,,""\n'
        '2026-09-02,s-3,"line one\nline ""two"""\n')
ROWS = [{"day": "2026-09-01", "sensor": "s-1", "note": "Привет, мир"},
        {"day": "2026-09-01", "sensor": None, "note": ""},
        {"day": "2026-09-02", "sensor": "s-3", "note": 'line one\nline "two"'}]


def _bytewise(data: bytes) -> Iterator[bytes]:
    """One byte per chunk: every split of a record, a quote or a UTF-8 character is exercised."""
    return (data[i:i + 1] for i in range(len(data)))


@pytest.mark.parametrize("count", [1, 2, 3, 10])
def test_csv_nulls_empty_strings_quotes_and_newlines(count: int) -> None:
    records = first_records(_bytewise(TEXT.encode()), CSV, CsvCodec(), NAMES, count, key="k")
    assert list(records) == ROWS[:count]


def test_gzip_is_inflated_as_it_streams() -> None:
    data = gzip.compress(TEXT.encode(), mtime=0)
    assert list(first_records(_bytewise(data), CSV_GZ, CsvCodec(), NAMES, 3, key="k")) == ROWS


def test_the_codec_dialect_is_the_one_read() -> None:
    codec = CsvCodec(delimiter=";", header=False, line_terminator="\r\n", null="\\N",
                     empty_string="EMPTY", bom=True)
    text = "\ufeff2026-09-01;\\N;EMPTY\r\n2026-09-02;s-2;\"\\N\"\r\n"
    records = first_records([text.encode()], CSV, codec, NAMES, 5, key="k")
    assert list(records) == [{"day": "2026-09-01", "sensor": None, "note": ""},
                             {"day": "2026-09-02", "sensor": "s-2", "note": "\\N"}]


def test_json_payloads_decode_to_json_values() -> None:
    rows = [{"a": 1, "b": None, "c": "ж"}, {"a": 2.5, "b": [1], "c": ""}, {"a": 3}]
    ndjson = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    array = json.dumps(rows, ensure_ascii=False).encode()
    assert list(first_records(_bytewise(ndjson), NDJSON, CsvCodec(), (), 2, key="k")) == rows[:2]
    assert list(first_records(_bytewise(array), ARRAY, CsvCodec(), (), 5, key="k")) == rows
    assert first_records([b"\x00\x01"], RAW, CsvCodec(), (), 5, key="k") == ()


def test_only_a_prefix_of_a_large_payload_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sampling, "FIRST_READ", 64)
    line = "2026-09-01,s-1,x\n"
    read: list[bytes] = []

    def chunks() -> Iterator[bytes]:
        yield b"day,sensor,note\n"
        for _ in range(100_000):
            read.append(line.encode())
            yield line.encode()

    records = first_records(chunks(), CSV, CsvCodec(), NAMES, 3, key="k")
    assert len(records) == 3
    assert len(read) < 20  # a few hundred bytes of 1.7 MB


def test_bytes_that_do_not_decode_are_not_the_sealed_payload() -> None:
    with pytest.raises(DponeError) as raised:
        first_records([b"not gzip at all"], CSV_GZ, CsvCodec(), NAMES, 1,
                      key="payloads/sha256/ab.csv.gz")
    assert raised.value.code == "artifact.conflict"
    assert "payloads/sha256/ab.csv.gz" in raised.value.message
