"""Deterministic gzip (RFC 1952) over stdlib zlib, for any input chunking.

The member header is written here, not by zlib: ``1f 8b 08``, no flags, MTIME 0, XFL 2 at
level 9 and 4 at level 1 (else 0), OS 255 (unknown), no file name. (zlib's own gzip wrapper
writes the build's OS code, which varies between platforms.) The body is a raw deflate stream
(window 2**15, memLevel 8, default strategy) followed by CRC-32 and ISIZE, little-endian.

Input is re-blocked into fixed :data:`BLOCK_BYTES` pieces before it reaches the compressor,
so the compressor sees the same calls, and writes the same bytes, however the input was
chunked. Equal bytes for equal input then depend only on the level and the zlib build, which
the payload artifact records.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator

from dpone.contracts.profile import GzipCodec

BLOCK_BYTES = 1 << 17
_MEM_LEVEL = 8
_OS_UNKNOWN = 255
_BytesLike = bytes | bytearray | memoryview


def gzip_header(level: int) -> bytes:
    """The 10-byte member header for ``level``: no name, MTIME 0, OS unknown."""
    extra_flags = 2 if level == 9 else 4 if level == 1 else 0
    return b"\x1f\x8b\x08\x00" + b"\x00\x00\x00\x00" + bytes((extra_flags, _OS_UNKNOWN))


def gzip_stream(chunks: Iterable[_BytesLike], codec: GzipCodec) -> Iterator[bytes]:
    """Compress a byte stream into one gzip member (see the module rules)."""
    return _compress(chunks, codec.level)


def _compress(chunks: Iterable[_BytesLike], level: int) -> Iterator[bytes]:
    yield gzip_header(level)
    deflate = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, _MEM_LEVEL,
                               zlib.Z_DEFAULT_STRATEGY)
    crc = 0
    size = 0
    pending = bytearray()
    for chunk in chunks:
        view = memoryview(chunk).cast("B")
        crc = zlib.crc32(view, crc)
        size += len(view)
        if pending:
            take = BLOCK_BYTES - len(pending)
            pending += view[:take]
            view = view[take:]
            if len(pending) < BLOCK_BYTES:
                continue
            out = deflate.compress(pending)
            pending.clear()
            if out:
                yield out
        while len(view) >= BLOCK_BYTES:
            out = deflate.compress(view[:BLOCK_BYTES])
            view = view[BLOCK_BYTES:]
            if out:
                yield out
        pending += view
    out = deflate.compress(pending) if pending else b""
    yield out + deflate.flush(zlib.Z_FINISH) + struct.pack("<II", crc, size & 0xFFFFFFFF)
