"""A small, strict ``multipart/form-data`` reader (RFC 7578 over RFC 2046 framing).

It works on the complete body bytes, accepts CRLF framing only, ignores a preamble and an
epilogue, and bounds the number of parts and the size of each part's headers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dpone.receiver._readers import PayloadError

_MAX_PARTS = 32
_MAX_HEADER_BYTES = 8192
_BOUNDARY = re.compile(r"[0-9A-Za-z'()+_,./:=? -]{0,69}[0-9A-Za-z'()+_,./:=?-]")
_PARAM = re.compile(r';\s*([A-Za-z][A-Za-z0-9_*-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s"]+))')


@dataclass(frozen=True)
class Part:
    name: str
    filename: str | None
    content_type: str | None
    data: bytes


def _params(value: str) -> tuple[str, dict[str, str]]:
    """Split ``type; a=1; b="x"`` into the lower-cased first token and its parameters."""
    head, _, rest = value.partition(";")
    params: dict[str, str] = {}
    rest = ";" + rest if rest else ""
    pos = 0
    while pos < len(rest):
        match = _PARAM.match(rest, pos)
        if match is None:
            raise PayloadError("malformed header parameters")
        key = match.group(1).lower()
        if key in params:
            raise PayloadError(f"repeated header parameter {key!r}")
        quoted = match.group(2)
        params[key] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else match.group(3)
        pos = match.end()
        while pos < len(rest) and rest[pos] in " \t":
            pos += 1
    return head.strip().lower(), params


def boundary_of(content_type: str) -> str:
    """The boundary of a ``multipart/form-data`` Content-Type header value."""
    media, params = _params(content_type)
    if media != "multipart/form-data":
        raise PayloadError("the request is not multipart/form-data")
    boundary = params.get("boundary", "")
    if not _BOUNDARY.fullmatch(boundary):
        raise PayloadError("missing or invalid multipart boundary")
    return boundary


def parse_multipart(body: bytes, content_type: str) -> list[Part]:
    """Every part of the body, in order."""
    delimiter = b"--" + boundary_of(content_type).encode("ascii")
    if body.startswith(delimiter):
        pos = len(delimiter)
    else:
        first = body.find(b"\r\n" + delimiter)
        if first < 0:
            raise PayloadError("no multipart delimiter in the body")
        pos = first + 2 + len(delimiter)
    parts: list[Part] = []
    separator = b"\r\n" + delimiter
    while True:
        if body.startswith(b"--", pos):
            break
        line_end = body.find(b"\r\n", pos)
        if line_end < 0 or body[pos:line_end].strip(b" \t"):
            raise PayloadError("malformed multipart delimiter line")
        start = line_end + 2
        end = body.find(separator, start)
        if end < 0:
            raise PayloadError("the multipart body has no closing delimiter")
        if len(parts) == _MAX_PARTS:
            raise PayloadError(f"more than {_MAX_PARTS} multipart parts")
        parts.append(_part(body[start:end], len(parts) + 1))
        pos = end + len(separator)
    if not parts:
        raise PayloadError("the multipart body has no parts")
    return parts


def _part(raw: bytes, number: int) -> Part:
    head_end = raw.find(b"\r\n\r\n")
    if raw.startswith(b"\r\n"):
        head, data = b"", raw[2:]
    elif head_end < 0:
        raise PayloadError(f"multipart part {number} has no header terminator")
    else:
        head, data = raw[:head_end], raw[head_end + 4:]
    if len(head) > _MAX_HEADER_BYTES:
        raise PayloadError(f"multipart part {number} headers exceed {_MAX_HEADER_BYTES} bytes")
    try:
        lines = head.decode("utf-8").split("\r\n") if head else []
    except UnicodeDecodeError:
        raise PayloadError(f"multipart part {number} headers are not UTF-8") from None
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        key = name.strip().lower()
        if not colon or not key or key in headers:
            raise PayloadError(f"multipart part {number} has a malformed or repeated header")
        headers[key] = value.strip()
    disposition, params = _params(headers.get("content-disposition", ""))
    if disposition != "form-data" or not params.get("name"):
        raise PayloadError(f"multipart part {number} needs Content-Disposition: form-data; name=...")
    content_type = headers.get("content-type")
    return Part(name=params["name"], filename=params.get("filename"),
                content_type=content_type.lower() if content_type else None, data=data)
