"""gzip: fixed header, stdlib-readable, identical bytes for any input chunking; measurement."""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpone.codecs import BLOCK_BYTES, gzip_header, gzip_stream, measure, raw_stream
from dpone.contracts.profile import GzipCodec


def compressed(chunks: list[bytes], level: int = 6) -> bytes:
    return b"".join(gzip_stream(chunks, GzipCodec(level=level)))


def sample(size: int, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    words = [b"2026-08-01", b"S-036", "Москва".encode(), b"-30.099", b"\n", b","]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words) if rng.random() < 0.9 else rng.randbytes(8)
    return bytes(out[:size])


def chunked(data: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    pieces, at = [], 0
    while at < len(data):
        step = rng.choice([0, 1, 7, 1000, BLOCK_BYTES - 1, BLOCK_BYTES + 1, 3 * BLOCK_BYTES])
        pieces.append(data[at:at + step])
        at += step
    return pieces


@pytest.mark.parametrize(("level", "xfl"), [(1, 4), (6, 0), (9, 2)])
def test_header_is_fixed(level: int, xfl: int) -> None:
    header = bytes([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, xfl, 255])
    assert gzip_header(level) == header
    assert compressed([b"abc"], level)[:10] == header


@pytest.mark.parametrize("level", [1, 6, 9])
def test_round_trip_with_stdlib_readers(level: int) -> None:
    data = sample(700_000)
    out = compressed([data], level)
    assert gzip.decompress(out) == data
    assert zlib.decompress(out, wbits=31) == data
    with gzip.GzipFile(fileobj=io.BytesIO(out)) as reader:
        assert reader.read() == data
        assert reader.mtime == 0
    # Trailer: CRC-32 and size of the input.
    assert out[-8:] == zlib.crc32(data).to_bytes(4, "little") + len(data).to_bytes(4, "little")


def test_equal_to_one_shot_deflate_and_independent_of_chunking() -> None:
    data = sample(1_000_000)
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY)
    one_shot = (gzip_header(6) + deflate.compress(data) + deflate.flush()
                + zlib.crc32(data).to_bytes(4, "little") + len(data).to_bytes(4, "little"))
    assert compressed([data]) == one_shot
    for seed in range(5):
        assert compressed(chunked(data, seed)) == one_shot


def test_empty_input_is_a_valid_member() -> None:
    out = compressed([])
    assert gzip.decompress(out) == b""
    assert compressed([b"", b""]) == out


def test_accepts_bytes_like_chunks() -> None:
    data = sample(300_000)
    view = memoryview(bytearray(data))
    assert compressed([view[:5], bytearray(data[5:10]), view[10:]]) == compressed([data])


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=3000), st.lists(st.integers(0, 3000), max_size=8), st.sampled_from([1, 6, 9]))
def test_any_chunking_gives_the_same_bytes(data: bytes, cuts: list[int], level: int) -> None:
    points = sorted(min(c, len(data)) for c in cuts)
    bounds = [0, *points, len(data)]
    pieces = [data[a:b] for a, b in itertools.pairwise(bounds)]
    out = compressed(pieces, level)
    assert out == compressed([data], level)
    assert gzip.decompress(out) == data


def test_measure_counts_and_hashes_while_streaming() -> None:
    data = sample(500_000)
    stream, measurement = measure(raw_stream(chunked(data, 3)))
    assert not measurement.complete
    with pytest.raises(RuntimeError):
        _ = measurement.size
    assert b"".join(stream) == data
    assert measurement.complete
    assert measurement.size == len(data)
    assert measurement.sha256 == hashlib.sha256(data).hexdigest()
    assert measurement.digest == "sha256:" + hashlib.sha256(data).hexdigest()


def test_a_partly_consumed_stream_has_no_figures() -> None:
    stream, measurement = measure(iter([b"a", b"b"]))
    next(stream)
    with pytest.raises(RuntimeError):
        _ = measurement.digest


def test_raw_stream_passes_bytes_through() -> None:
    data = sample(2_500_000)
    assert b"".join(raw_stream(io.BytesIO(data), chunk_size=1 << 20)) == data
    chunks = list(raw_stream([b"", bytearray(b"ab"), memoryview(b"cd"), b""]))
    assert chunks == [b"ab", b"cd"]
    assert all(type(chunk) is bytes for chunk in chunks)
    with pytest.raises(ValueError):
        raw_stream([], chunk_size=0)
