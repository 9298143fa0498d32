"""Format and compression dispatch for a profile's payload, and raw file pass-through."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO

import pyarrow as pa

from dpone.codecs._columns import Batches
from dpone.codecs._csv import encode_csv
from dpone.codecs._errors import PayloadEncodingError
from dpone.codecs._gzip import gzip_stream
from dpone.codecs._json import encode_json_array, encode_ndjson
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.profile import Codec, PayloadFormat

RAW_CHUNK_BYTES = 1 << 20
_BytesLike = bytes | bytearray | memoryview


def encode_rows(batches: Batches, mapping: PayloadMapping, payload: PayloadFormat,
                codec: Codec) -> Iterator[bytes]:
    """The uncompressed (decoded) payload bytes of rows in the profile's format."""
    if payload.format == "csv":
        return encode_csv(batches, mapping, codec.csv)
    if payload.format == "ndjson":
        return encode_ndjson(batches, mapping, codec.json_codec)
    if payload.format == "json_array":
        return encode_json_array(batches, mapping, codec.json_codec)
    raise PayloadEncodingError("a raw payload is a file, not rows: stream it with raw_stream")


def compress(chunks: Iterable[_BytesLike], payload: PayloadFormat, codec: Codec) -> Iterator[bytes]:
    """The payload's compression applied to decoded bytes (``none`` passes them through)."""
    if payload.compression == "gzip":
        return gzip_stream(chunks, codec.gzip)
    return raw_stream(chunks)


def raw_stream(source: Iterable[_BytesLike] | BinaryIO, *,
               chunk_size: int = RAW_CHUNK_BYTES) -> Iterator[bytes]:
    """Pass bytes through unchanged, as ``bytes`` chunks, skipping empty ones.

    ``source`` is an iterable of bytes-like chunks or a binary file object (read in
    ``chunk_size`` pieces; the caller opens and closes it).
    """
    if chunk_size < 1:
        raise ValueError("chunk_size must be positive")
    return _raw(source, chunk_size)


def _raw(source: Iterable[_BytesLike] | BinaryIO, chunk_size: int) -> Iterator[bytes]:
    if hasattr(source, "read"):
        while chunk := source.read(chunk_size):
            yield bytes(chunk)
        return
    for chunk in source:
        if chunk:
            yield chunk if isinstance(chunk, bytes) else bytes(chunk)


CODEC_VERSION = "dpone.codecs.v1"
"""The version of the encoding rules in this package; a rule change gets a new version."""


def codec_libraries() -> dict[str, str]:
    """What the sealed bytes depend on besides the rows and the codec: record it with them.

    gzip output depends on the zlib build (zlib and zlib-ng differ); text layout on the
    rules version and, through checked casts, on pyarrow.
    """
    return {"rules": CODEC_VERSION, "pyarrow": pa.__version__, "zlib": zlib.ZLIB_RUNTIME_VERSION}
