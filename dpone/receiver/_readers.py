"""The receiver's own payload readers: NDJSON, gzip and CSV.

They share no code with the product's codecs on purpose, so a codec bug cannot hide itself:
the receiver decodes what arrived on the wire, strictly, and says where it stopped.
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

Row = dict[str, Any]
_MESSAGE_LIMIT = 200


class PayloadError(ValueError):
    """A payload the receiver refuses; the message is bounded and never quotes the payload."""

    def __init__(self, message: str) -> None:
        super().__init__(message[:_MESSAGE_LIMIT])


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    row = dict(pairs)
    if len(row) != len(pairs):
        raise ValueError("duplicate key in object")
    return row


def read_ndjson(body: bytes) -> list[Row]:
    """One JSON object per ``\\n``-terminated line; UTF-8 strict; the last terminator optional."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"NDJSON is not UTF-8 at byte {exc.start}") from None
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    rows: list[Row] = []
    for number, line in enumerate(lines, start=1):
        try:
            value = json.loads(line, parse_constant=_no_constant, object_pairs_hook=_unique_object)
        except ValueError as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise PayloadError(f"NDJSON line {number}: {reason}") from None
        if not isinstance(value, dict):
            raise PayloadError(f"NDJSON line {number}: a row must be a JSON object")
        rows.append(value)
    return rows


def gunzip(data: bytes, limit: int) -> bytes:
    """Decompress one or more gzip members, refusing more than ``limit`` decoded bytes."""
    out = bytearray()
    rest = data
    if not rest:
        raise PayloadError("the file is empty, not gzip")
    while rest:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(rest, limit + 1 - len(out))
            while inflater.unconsumed_tail and len(out) <= limit:
                out += inflater.decompress(inflater.unconsumed_tail, limit + 1 - len(out))
        except zlib.error:
            raise PayloadError("the file is not valid gzip") from None
        if len(out) > limit:
            raise PayloadError(f"the file decodes to more than {limit} bytes")
        if not inflater.eof:
            raise PayloadError("the gzip stream is truncated")
        rest = inflater.unused_data
    return bytes(out)


_FIELD = re.compile(r'"((?:[^"]++|"")*+)"|([^,"\r\n]*+)')


def read_csv(data: bytes) -> list[dict[str, str | None]]:
    """RFC 4180 CSV with a header row, ``,`` delimiter and ``"`` quotes; UTF-8 strict, no BOM.

    An unquoted empty field is null (``None``) and a quoted empty field is the empty string,
    which the stdlib ``csv`` reader of Python 3.11 cannot tell apart; hence this tokenizer.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"CSV is not UTF-8 at byte {exc.start}") from None
    if text.startswith("\ufeff"):
        raise PayloadError("CSV starts with a byte order mark")
    records = _records(text)
    if not records:
        raise PayloadError("CSV has no header row")
    header = records[0]
    names = [name for name in header if name]
    if len(names) != len(header) or len(set(names)) != len(names):
        raise PayloadError("CSV header names must be non-empty and unique")
    rows: list[dict[str, str | None]] = []
    for number, record in enumerate(records[1:], start=2):
        if len(record) != len(names):
            raise PayloadError(f"CSV record {number} has {len(record)} fields, header has {len(names)}")
        rows.append(dict(zip(names, record, strict=True)))
    return rows


def _records(text: str) -> list[list[str | None]]:
    records: list[list[str | None]] = []
    pos, end = 0, len(text)
    while pos < end:
        record: list[str | None] = []
        while True:
            match = _FIELD.match(text, pos)
            if match is None:  # the second alternative matches the empty string: unreachable
                raise PayloadError(f"CSV record {len(records) + 1}: unreadable field")
            quoted, bare = match.group(1), match.group(2)
            record.append(quoted.replace('""', '"') if quoted is not None else (bare or None))
            pos = match.end()
            if pos >= end:
                break
            char = text[pos]
            if char == ",":
                pos += 1
                continue
            if char == "\n":
                pos += 1
                break
            if text.startswith("\r\n", pos):
                pos += 2
                break
            raise PayloadError(f"CSV record {len(records) + 1}: unexpected character after a field")
        records.append(record)
    return records
