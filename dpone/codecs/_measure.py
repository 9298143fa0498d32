"""Byte count and SHA-256 of a stream, taken while it flows to its consumer."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator


class Measurement:
    """Size and SHA-256 of a stream; readable once the stream has been consumed to its end.

    Reading a figure earlier raises ``RuntimeError``, so a truncated stream can never be
    recorded as a complete size or digest.
    """

    __slots__ = ("_complete", "_hash", "_size")

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self._size = 0
        self._complete = False

    def _add(self, chunk: bytes) -> None:
        self._hash.update(chunk)
        self._size += len(chunk)

    def _finish(self) -> None:
        self._complete = True

    @property
    def complete(self) -> bool:
        return self._complete

    def _checked(self) -> None:
        if not self._complete:
            raise RuntimeError("the measured stream has not been consumed to its end")

    @property
    def size(self) -> int:
        """Bytes that passed through."""
        self._checked()
        return self._size

    @property
    def sha256(self) -> str:
        """Lower-case hex SHA-256 of the bytes."""
        self._checked()
        return self._hash.hexdigest()

    @property
    def digest(self) -> str:
        """The content digest ``sha256:<hex>``."""
        return "sha256:" + self.sha256

    def __repr__(self) -> str:
        if not self._complete:
            return "Measurement(incomplete)"
        return f"Measurement(size={self._size}, digest={self.digest!r})"


def measure(chunks: Iterable[bytes]) -> tuple[Iterator[bytes], Measurement]:
    """Wrap a stream: the returned iterator yields the same chunks and fills the measurement.

    Decoded bytes are measured on the encoder's output before compression, payload bytes on
    the sealed (compressed) stream, wire bytes on the complete request body.
    """
    measurement = Measurement()
    return _tap(chunks, measurement), measurement


def _tap(chunks: Iterable[bytes], measurement: Measurement) -> Iterator[bytes]:
    for chunk in chunks:
        measurement._add(chunk)
        yield chunk
    measurement._finish()
