"""The first records of a sealed payload, decoded as the profile's codec encoded them.

`dpone preview --sample K` shows them so a person can check what the rows look like on the wire
(opt-in: rows are data). Only as much of the payload is read and decompressed as the first K
records need (the prefix doubles until it holds them), so a sample of a large payload stays
cheap. CSV is read with the codec's delimiter, quote and header and its null and empty-string
tokens (an unquoted null token is ``None``; a quoted field is always the text it quotes), which
the standard library's reader cannot tell apart; NDJSON and JSON arrays decode to JSON values.
"""

from __future__ import annotations

import codecs
import json
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

from dpone.contracts import DponeError
from dpone.contracts.profile import CsvCodec, PayloadFormat

FIRST_READ: Final = 1 << 16
"""Decoded characters read before the first attempt; each further attempt reads twice as many."""

Record = dict[str, Any]


def _decoded(chunks: Iterable[bytes], compression: str) -> Iterator[str]:
    """The payload as text, in pieces: decompressed and UTF-8 decoded as it is read."""
    inflate = zlib.decompressobj(wbits=31) if compression == "gzip" else None
    text = codecs.getincrementaldecoder("utf-8")()
    for chunk in chunks:
        data = inflate.decompress(chunk) if inflate is not None else chunk
        while data:
            yield text.decode(data)
            if inflate is None or not inflate.unconsumed_tail:
                break
            data = inflate.decompress(inflate.unconsumed_tail)
    if inflate is not None:
        yield text.decode(inflate.flush())
    yield text.decode(b"", final=True)


def _csv_records(text: str, codec: CsvCodec, final: bool) -> list[list[str | None]]:
    """The complete records of ``text`` (a prefix of the payload unless ``final``)."""
    records: list[list[str | None]] = []
    pos, end, delimiter, quote = 0, len(text), codec.delimiter, codec.quote
    while pos < end:
        record: list[str | None] = []
        while True:
            if pos < end and text[pos] == quote:
                parts, start = [], pos + 1
                while True:
                    close = text.find(quote, start)
                    if close < 0 or (close + 1 == end and not final):
                        return records  # the prefix ends inside this quoted field
                    parts.append(text[start:close])
                    if close + 1 < end and text[close + 1] == quote:
                        parts.append(quote)
                        start = close + 2
                        continue
                    pos = close + 1
                    break
                record.append("".join(parts))
            else:
                stop = pos
                while stop < end and text[stop] not in (delimiter, "\r", "\n"):
                    stop += 1
                bare = text[pos:stop]
                pos = stop
                record.append(None if bare == codec.null
                              else "" if bare == codec.empty_string else bare)
            if pos < end and text[pos] == delimiter:
                pos += 1
                continue
            break
        if pos >= end and not final:
            return records  # the record may go on in the next piece
        pos += 2 if text.startswith("\r\n", pos) else 1
        records.append(record)
    return records


def _json_records(text: str, fmt: str, final: bool) -> list[Any] | None:
    """The complete JSON values of ``text``; None when the prefix cannot be read yet."""
    if fmt == "ndjson":
        lines = text.splitlines() if final else text.splitlines()[:-1]
        return [json.loads(line) for line in lines if line.strip()]
    decoder, pos = json.JSONDecoder(), text.find("[") + 1
    values: list[Any] = []
    if pos == 0:
        return None if not final else []
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return values
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            if final:
                raise
            return values
        values.append(value)


def _records(text: str, payload: PayloadFormat, codec: CsvCodec, names: Sequence[str],
             final: bool) -> list[Record]:
    if payload.format == "csv":
        if codec.bom:
            text = text.removeprefix("\ufeff")
        rows = _csv_records(text, codec, final)
        header = [str(name) for name in rows[0]] if codec.header and rows else list(names)
        body = rows[1:] if codec.header else rows
        return [dict(zip(header, row, strict=False)) for row in body]
    values = _json_records(text, payload.format, final) or []
    return [value if isinstance(value, dict) else {"value": value} for value in values]


def first_records(chunks: Iterable[bytes], payload: PayloadFormat, codec: CsvCodec,
                  names: Sequence[str], count: int, *, key: str) -> tuple[Record, ...]:
    """The first ``count`` records of the payload artifact ``key`` streamed as ``chunks``;
    ``names`` are the mapping's columns (the field names of a CSV without a header row). A
    ``raw`` payload has no records. Bytes that do not decode as the codec writes them are not
    the sealed payload: ``artifact.conflict``."""
    if payload.format == "raw" or count <= 0:
        return ()
    text, target, final = "", FIRST_READ, False
    pieces = _decoded(chunks, payload.compression)
    try:
        while True:
            while len(text) < target and not final:
                piece = next(pieces, None)
                if piece is None:
                    final = True
                else:
                    text += piece
            records = _records(text, payload, codec, names, final)
            if len(records) >= count or final:
                return tuple(records[:count])
            target *= 2
    except (zlib.error, UnicodeDecodeError, ValueError) as error:
        encoding = payload.format + (" + gzip" if payload.compression == "gzip" else "")
        raise DponeError(code="artifact.conflict",
                         message=f"the payload artifact {key!r} does not decode as {encoding} "
                                 f"({type(error).__name__}): it does not hold the bytes sealed "
                                 "for it", details={"key": key}) from error
