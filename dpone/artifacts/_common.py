"""What every artifact store shares: the key rule, digests, catalog errors and a chunk reader."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any

from dpone.contracts import DponeError
from dpone.contracts.ports import ArtifactRef

MAX_KEY_LENGTH = 1024
MAX_SEGMENT_LENGTH = 255  # a file name on common filesystems; keeps keys portable across stores
_SEGMENT_RE = re.compile(r"[A-Za-z0-9._=@+-]+")


def validate_key(key: str) -> str:
    """Return ``key`` if it is a portable artifact key, else raise ``artifact.invalid_key``.

    A key is relative, at most 1024 characters, and made of ``/``-separated segments of
    ``[A-Za-z0-9._=@+-]``; empty, ``.`` and ``..`` segments are refused, and so is any segment
    longer than 255 characters.
    """
    if not isinstance(key, str) or not key:
        raise _invalid(key, "an artifact key is a non-empty string")
    if len(key) > MAX_KEY_LENGTH:
        raise _invalid(key, f"an artifact key has at most {MAX_KEY_LENGTH} characters")
    for segment in key.split("/"):
        if not segment:
            raise _invalid(key, "an artifact key is relative and has no empty segment")
        if segment in (".", ".."):
            raise _invalid(key, "an artifact key has no '.' or '..' segment")
        if len(segment) > MAX_SEGMENT_LENGTH:
            raise _invalid(key, f"a key segment has at most {MAX_SEGMENT_LENGTH} characters")
        if not _SEGMENT_RE.fullmatch(segment):
            raise _invalid(key, "a key segment uses only the characters [A-Za-z0-9._=@+-]")
    return key


def _invalid(key: object, why: str) -> DponeError:
    shown = repr(key) if len(repr(key)) <= 120 else repr(key)[:117] + "..."
    return DponeError(code="artifact.invalid_key", message=f"invalid artifact key {shown}: {why}",
                      details={"reason": why})


def render_digest(hexdigest: str) -> str:
    """``sha256:<hex>``: the rendering of :class:`dpone.contracts.Digest`."""
    return "sha256:" + hexdigest


def hash_chunks(chunks: Iterable[bytes], hasher: Any = None) -> tuple[str, int]:
    """Digest and size of a stream, read once, never held whole.

    With ``hasher`` the stream continues an earlier hash: the digest covers both parts and the
    size counts only these chunks.
    """
    hasher = hasher if hasher is not None else hashlib.sha256()
    size = 0
    for chunk in chunks:
        hasher.update(chunk)
        size += len(chunk)
    return render_digest(hasher.hexdigest()), size


def settle(ref: ArtifactRef, existing_digest: str, existing_size: int) -> ArtifactRef:
    """An existing key: the same bytes make the write a no-op, other bytes are a conflict."""
    if existing_digest == ref.digest and existing_size == ref.size:
        return ref
    raise conflict(ref.key, existing=existing_digest, offered=ref.digest)


def conflict(key: str, *, existing: str, offered: str) -> DponeError:
    return DponeError(
        code="artifact.conflict",
        message=f"artifact {key!r} already holds other bytes ({existing}); the write of "
                f"{offered} was refused and nothing was overwritten",
        details={"key": key, "existing_digest": existing, "offered_digest": offered},
    )


def not_found(key: str, where: str) -> DponeError:
    return DponeError(code="artifact.not_found", message=f"no artifact {key!r} in {where}",
                      details={"key": key})


def unavailable(message: str, key: str | None = None, *, path: str | None = None) -> DponeError:
    details = {} if key is None else {"key": key}
    if path is not None:
        details["path"] = path
    return DponeError(code="artifacts.unavailable", message=message, details=details)


def check_chunk_size(chunk_size: int) -> int:
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ValueError("chunk_size must be a positive int")
    return chunk_size


class ChunkReader(Iterator[bytes]):
    """Iterates an open byte source in chunks and closes it at the end, on error or on close().

    The source is opened by the store before this object exists, so a missing key fails at the
    ``open_stream`` call rather than at the first ``next()``. Errors of the given types raised
    while reading become ``artifacts.unavailable``, raised from the original.
    """

    def __init__(self, read: Callable[[int], bytes], close: Callable[[], None], chunk_size: int,
                 *, key: str, read_errors: tuple[type[BaseException], ...]) -> None:
        self._read = read
        self._close: Callable[[], None] | None = close
        self._chunk_size = chunk_size
        self._key = key
        self._read_errors = read_errors

    def __iter__(self) -> ChunkReader:
        return self

    def __next__(self) -> bytes:
        if self._close is None:
            raise StopIteration
        try:
            chunk = self._read(self._chunk_size)
        except self._read_errors as exc:
            self.close()
            raise unavailable(f"reading artifact {self._key!r} failed: {type(exc).__name__}",
                              self._key) from exc
        if not chunk:
            self.close()
            raise StopIteration
        return chunk

    def close(self) -> None:
        close, self._close = self._close, None
        if close is not None:
            close()

    def __enter__(self) -> ChunkReader:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
