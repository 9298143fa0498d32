"""Payload bytes of a parent row interval: encoding, compression and keys."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyarrow as pa

from dpone.codecs import PayloadEncodingError, compress
from dpone.contracts import DponeError
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.profile import Codec, PayloadFormat
from dpone.executor.seal._rowblocks import RowBlocks


def encoding_error(error: PayloadEncodingError) -> DponeError:
    """A value the codec refuses, as the catalog error naming the column (never the value)."""
    column = error.column if error.column is not None else "(schema)"
    return DponeError(code="source.type_mismatch",
                      message=f"column {column!r}: {error.reason}",
                      details={"column": error.column, "row": error.row})


class ByteCount:
    """Bytes that passed through a stream; readable once it has been consumed to its end."""

    __slots__ = ("_complete", "_size")

    def __init__(self) -> None:
        self._size = 0
        self._complete = False

    @property
    def size(self) -> int:
        if not self._complete:
            raise RuntimeError("the counted stream has not been consumed to its end")
        return self._size

    def tap(self, chunks: Iterator[bytes | memoryview]) -> Iterator[bytes | memoryview]:
        for chunk in chunks:
            self._size += len(chunk)
            yield chunk
        self._complete = True


class PayloadEncoder:
    """Encodes row intervals of the memory-mapped parent table with the profile's codec.

    ``table`` is zero-copy over the parent's IPC file, so rows stream straight from the mapped
    pages; row texts are encoded once per block of rows and every interval is sliced out of
    them (:class:`~dpone.executor.seal._rowblocks.RowBlocks`): the same interval always yields
    the same bytes, those of :func:`~dpone.codecs.encode_rows` of its rows. Not thread-safe.
    """

    def __init__(self, table: pa.Table, mapping: PayloadMapping, payload: PayloadFormat,
                 codec: Codec) -> None:
        self._payload = payload
        self._codec = codec
        self._blocks = RowBlocks(table, mapping, payload, codec)

    def sealed_chunks(self, first_row: int, row_count: int) -> tuple[list[bytes | memoryview], int]:
        """The sealed bytes of an interval, encoded (and compressed) now, and its decoded size.

        Nothing is hashed here (the spool writer hashes while it writes). Uncompressed payloads
        stay zero-copy slices of the encoded row texts, which they keep alive.
        """
        decoded = ByteCount()
        stream = decoded.tap(_guarded(lambda: self._blocks.payload(first_row, row_count)))
        if self._payload.compression == "none":
            chunks = [chunk for chunk in stream if len(chunk)]
        else:
            chunks = list(compress(stream, self._payload, self._codec))
        return chunks, decoded.size


def _guarded(start: Callable[[], Iterator[bytes | memoryview]]
             ) -> Iterator[bytes | memoryview]:
    try:
        yield from start()
    except PayloadEncodingError as error:
        raise encoding_error(error) from error
