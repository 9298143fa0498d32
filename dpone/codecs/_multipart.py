"""The deterministic ``multipart/form-data`` envelope (RFC 7578) around one sealed payload.

Layout, CRLF framing, no preamble, parts in this order::

    --B CRLF  Content-Disposition: form-data; name="<scalar>" CRLF CRLF <value> CRLF
    ...one per scalar part, in the given order...
    --B CRLF  Content-Disposition: form-data; name="<payload>"; filename="<file>" CRLF
              Content-Type: <type> CRLF CRLF <payload bytes> CRLF
    --B-- CRLF

Scalar values are UTF-8 text without a part Content-Type. The boundary ``B`` is
``dpone-`` + the first 32 hex digits of H("multipart_boundary", {payload digest, payload part
name, filename, content type, ordered scalar parts, attempt}), with attempt 0, 1, 2...: the
first candidate that occurs in no part (headers, values, filename, payload bytes, the
payload checked by streaming it) is chosen, so the choice is deterministic and bound to the
rendered envelope. ``content_length`` is exact without materializing the payload.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from dpone.codecs._errors import PayloadIntegrityError
from dpone.contracts.identity import DigestValue, identity

BOUNDARY_PREFIX = "dpone-"
_FILENAME = re.compile(r"[A-Za-z0-9._-]{1,255}")
_PART_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_CONTENT_TYPE = re.compile(r"[a-z]+/[A-Za-z0-9.+-]{1,127}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_SEALED_BOUNDARY = re.compile(BOUNDARY_PREFIX + r"[0-9a-f]{32}")
_CANDIDATES_PER_PASS = 4
_MAX_CANDIDATES = 64
_CRLF = b"\r\n"

PayloadSource = Callable[[], Iterable[bytes]]
"""Returns a fresh iterator over the sealed payload bytes each time it is called."""


class MultipartEnvelope:
    """The complete request body around one sealed payload part and ordered scalar parts.

    Construction validates every name, streams the payload once through ``payload`` to check
    its size and digest and to collision-check the boundary, and renders every byte of the
    body except the payload itself. Given the ``sealed_boundary`` chosen when the payload was
    sealed, the payload is not read at construction: :meth:`iter_body` still checks its size and
    digest while streaming, so the bytes sent are the bytes that boundary was checked against.
    """

    def __init__(
        self,
        *,
        payload_name: str,
        filename: str,
        content_type: str,
        scalar_parts: Sequence[tuple[str, str]],
        payload_size: int,
        payload_digest: str,
        payload: PayloadSource,
        sealed_boundary: str | None = None,
    ) -> None:
        _check(_PART_NAME, payload_name, "payload part name")
        _check(_FILENAME, filename, "filename (allowed: A-Z a-z 0-9 . _ -)")
        _check(_CONTENT_TYPE, content_type, "payload content type")
        _check(_DIGEST, payload_digest, "payload digest")
        if payload_size < 0:
            raise ValueError("payload size must be non-negative")
        names = [name for name, _ in scalar_parts]
        for name in names:
            _check(_PART_NAME, name, "scalar part name")
        if len({*names, payload_name}) != len(names) + 1:
            raise ValueError("multipart part names must be unique")
        self.payload_name = payload_name
        self.filename = filename
        self.payload_content_type = content_type
        for _, value in scalar_parts:
            if not isinstance(value, str):
                raise TypeError(f"scalar part values are text, not {type(value).__name__}")
        self.scalar_parts: tuple[tuple[str, str], ...] = tuple(scalar_parts)
        self.payload_size = payload_size
        self.payload_digest = payload_digest
        self._scalar_texts = [(_disposition(name) + b"\r\n\r\n", value.encode("utf-8"))
                              for name, value in self.scalar_parts]
        self._file_headers = (_disposition(payload_name, filename) + b"\r\nContent-Type: "
                              + content_type.encode("ascii") + b"\r\n\r\n")
        self.boundary = (self._choose_boundary(payload) if sealed_boundary is None
                         else self._sealed(sealed_boundary))
        delimiter = b"--" + self.boundary.encode("ascii") + _CRLF
        head = b"".join(delimiter + headers + value + _CRLF for headers, value in self._scalar_texts)
        self._head = head + delimiter + self._file_headers
        self._tail = _CRLF + b"--" + self.boundary.encode("ascii") + b"--" + _CRLF

    @property
    def content_type(self) -> str:
        """The request's Content-Type header value."""
        return f"multipart/form-data; boundary={self.boundary}"

    @property
    def content_length(self) -> int:
        """Exact size of the complete body: the wire bytes."""
        return len(self._head) + self.payload_size + len(self._tail)

    @property
    def content_disposition(self) -> str:
        """The payload part's Content-Disposition header value."""
        return f'form-data; name="{self.payload_name}"; filename="{self.filename}"'

    def request_semantics(self) -> dict[str, Any]:
        """The envelope's part of ``rendered_request_semantics_digest`` (as keyword arguments)."""
        return {
            "ordered_scalar_multipart_parts": [[name, value] for name, value in self.scalar_parts],
            "payload_part_name": self.payload_name,
            "deterministic_filename": self.filename,
            "content_disposition_and_type": {"content_disposition": self.content_disposition,
                                             "content_type": self.payload_content_type},
            "deterministic_multipart_boundary": self.boundary,
            "sealed_payload_digest": self.payload_digest,
        }

    def iter_body(self, payload_chunks: Iterable[bytes]) -> Iterator[bytes]:
        """Stream the body. The payload must be the sealed bytes: a size or digest mismatch
        raises :class:`PayloadIntegrityError` before the closing delimiter is written, so a
        receiver never sees a complete body around other bytes."""
        yield self._head
        digest = hashlib.sha256()
        size = 0
        for chunk in payload_chunks:
            size += len(chunk)
            if size > self.payload_size:
                raise PayloadIntegrityError("payload is longer than its sealed size")
            digest.update(chunk)
            if chunk:
                yield bytes(chunk)
        if size != self.payload_size or "sha256:" + digest.hexdigest() != self.payload_digest:
            raise PayloadIntegrityError("payload bytes differ from the sealed size or digest")
        yield self._tail

    def body(self, payload: bytes) -> bytes:
        """The complete body for an in-memory payload (small payloads and tests)."""
        return b"".join(self.iter_body([payload]))

    def _candidate(self, attempt: int) -> str:
        rendered = identity("multipart_boundary", {
            "payload_digest": DigestValue(self.payload_digest),
            "payload_part_name": self.payload_name,
            "filename": self.filename,
            "content_type": self.payload_content_type,
            "scalar_parts": [[name, value] for name, value in self.scalar_parts],
            "attempt": attempt,
        })
        return BOUNDARY_PREFIX + rendered[len("sha256:"):][:32]

    def _sealed(self, boundary: str) -> str:
        """A boundary chosen at seal time: dpone's form, and absent from the rendered parts."""
        _check(_SEALED_BOUNDARY, boundary, "sealed multipart boundary")
        texts = [headers + value for headers, value in self._scalar_texts] + [self._file_headers]
        if any(boundary.encode("ascii") in text for text in texts):
            raise ValueError("the sealed boundary occurs in a rendered part")
        return boundary

    def _choose_boundary(self, payload: PayloadSource) -> str:
        texts = [headers + value for headers, value in self._scalar_texts] + [self._file_headers]
        for first in range(0, _MAX_CANDIDATES, _CANDIDATES_PER_PASS):
            candidates = [c for c in map(self._candidate, range(first, first + _CANDIDATES_PER_PASS))
                          if not any(c.encode("ascii") in text for text in texts)]
            if not candidates:
                continue
            found = _occurring(payload(), [c.encode("ascii") for c in candidates],
                               self.payload_size, self.payload_digest)
            for candidate in candidates:
                if candidate.encode("ascii") not in found:
                    return candidate
        raise ValueError(f"no collision-free multipart boundary in {_MAX_CANDIDATES} candidates")


def _check(pattern: re.Pattern[str], value: str, what: str) -> None:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise ValueError(f"invalid {what}: {value!r}")


def _disposition(name: str, filename: str | None = None) -> bytes:
    text = f'Content-Disposition: form-data; name="{name}"'
    if filename is not None:
        text += f'; filename="{filename}"'
    return text.encode("ascii")


def _occurring(chunks: Iterable[bytes], needles: list[bytes], size: int, digest: str) -> set[bytes]:
    """Which needles occur in the streamed bytes (also across chunk seams); checks the
    stream's size and digest on the way."""
    width = len(needles[0]) - 1
    found: set[bytes] = set()
    hasher = hashlib.sha256()
    seen = 0
    tail = b""
    for piece in chunks:
        if not piece:
            continue
        chunk = piece if isinstance(piece, bytes) else bytes(piece)
        hasher.update(chunk)
        seen += len(chunk)
        seam = tail + chunk[:width]
        found.update(n for n in needles if n not in found and (n in seam or n in chunk))
        tail = (tail + chunk[-width:])[-width:]
    if seen != size or "sha256:" + hasher.hexdigest() != digest:
        raise PayloadIntegrityError("payload bytes differ from the declared size or digest")
    return found
