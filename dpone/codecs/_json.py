"""Deterministic NDJSON and JSON array: each row's object text is built with Arrow kernels.

Rules (profile-owned parameters come from :class:`~dpone.contracts.profile.JsonCodec`):

- One object per row, fields in mapping order, no insignificant whitespace:
  ``{"a":1,"b":"x"}``. NDJSON ends every object with ``\\n`` (the last too); a JSON array is
  ``[`` + objects separated by ``,`` + ``]`` (``[]`` when empty).
- Strings are escaped exactly as Python's ``json.dumps`` does: ``\\"``, ``\\\\``, ``\\n``,
  ``\\r``, ``\\t``, ``\\b``, ``\\f``, other control characters as ``\\u00XX``; with
  ``non_ascii: escape`` every non-ASCII character is a ``\\u`` escape of four hex digits
  (surrogate pairs above U+FFFF), with ``raw_utf8`` it is written as UTF-8.
- int64 exact decimal; float64 Python ``repr`` (valid JSON; NaN/infinity refused); bool
  ``true``/``false``; date ``"YYYY-MM-DD"``; timestamp ``"YYYY-MM-DDTHH:MM:SS[.fff]Z"`` at
  ``timestamp_precision``, UTC.
- A null is ``"name":null`` (``explicit_null``) or the field is left out (``omit``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from dpone.codecs._arrow import (
    TEXT,
    Array,
    as_text,
    buffer_contains,
    character_data,
    contains_any,
    join,
    patch,
    text,
    text_bytes,
)
from dpone.codecs._columns import Batches, Slice, format_scalar, probe_arrow_text, slices
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.profile import JsonCodec

_CONTROL = tuple(chr(code) for code in range(0x20))
_QUOTED_TYPES = ("string", "date", "timestamp")
_ARRAY_OPEN, _ARRAY_CLOSE, _EMPTY_ARRAY = b"[", b"]", b"[]"


def encode_ndjson(batches: Batches, mapping: PayloadMapping, codec: JsonCodec) -> Iterator[bytes]:
    """Encode rows as newline-delimited JSON objects (see the module rules)."""
    probe_arrow_text()
    return _ndjson(batches, mapping, codec)


def encode_json_array(batches: Batches, mapping: PayloadMapping, codec: JsonCodec) -> Iterator[bytes]:
    """Encode rows as one JSON array of objects (see the module rules)."""
    probe_arrow_text()
    return _json_array(batches, mapping, codec)


def _ndjson(batches: Batches, mapping: PayloadMapping, codec: JsonCodec) -> Iterator[bytes]:
    for piece in slices(batches, mapping):
        if piece.batch.num_rows:
            yield text_bytes(_objects(piece, mapping, codec, "", "}\n"))


def _json_array(batches: Batches, mapping: PayloadMapping, codec: JsonCodec) -> Iterator[bytes]:
    started = False
    for piece in slices(batches, mapping):
        if not piece.batch.num_rows:
            continue
        # Every object is ",{...}"; the stream's first comma becomes the opening bracket.
        chunk = text_bytes(_objects(piece, mapping, codec, ",", "}"))
        if not started:
            yield _ARRAY_OPEN
            chunk = chunk[1:]
            started = True
        yield chunk
    yield _ARRAY_CLOSE if started else _EMPTY_ARRAY


def json_row_texts(batches: Batches, mapping: PayloadMapping, codec: JsonCodec, lead: str,
                   closing: str) -> Iterator[Array]:
    """Each input slice's objects, one text per row: ``lead`` + ``{...`` + ``closing``."""
    return (_objects(piece, mapping, codec, lead, closing) for piece in slices(batches, mapping)
            if piece.batch.num_rows)


class _Row:
    """The element list of one row join; adjacent literal texts are merged as they come."""

    def __init__(self, opening: str) -> None:
        self.elements: list[Any] = []
        self._literal = opening
        # Whether an earlier field is present: False (in no row), True (in every row), or a
        # boolean array (per row, when earlier fields were omitted for nulls).
        self.earlier: Any = False

    def literal(self, value: str) -> None:
        self._literal += value

    def array(self, values: Array) -> None:
        if self._literal:
            self.elements.append(text(self._literal))
            self._literal = ""
        self.elements.append(values)

    def comma(self) -> None:
        """Write the field separator this row needs before a field that is always present."""
        if self.earlier is True:
            self.literal(",")
        elif self.earlier is not False:
            self.array(pc.if_else(self.earlier, text(","), text("")))
        self.earlier = True

    def close(self, closing: str) -> Array:
        """The joined row texts; every mapping column contributed one array element."""
        return join(*self.elements, text(self._literal + closing))


def _objects(piece: Slice, mapping: PayloadMapping, codec: JsonCodec, lead: str, closing: str) -> Array:
    row = _Row(lead + "{")
    for column, values in zip(mapping.columns, piece.batch.columns, strict=True):
        key = json.dumps(column.name) + ":"
        quoted = column.type in _QUOTED_TYPES
        if column.type == "string":
            rendered = escape_strings(as_text(values), codec.non_ascii == "escape")
        else:
            rendered = format_scalar(values, column, codec.timestamp_precision, piece.first_row)
        if not rendered.null_count:
            row.comma()
            row.literal(key + ('"' if quoted else ""))
            row.array(rendered)
            if quoted:
                row.literal('"')
            continue
        if quoted:
            rendered = join(text('"'), rendered, text('"'))
        if codec.null == "explicit_null":
            row.comma()
            row.literal(key)
            row.array(pc.fill_null(rendered, text("null")))
            continue
        present = pc.is_valid(rendered)
        if row.earlier is False:
            field = join(text(key), rendered)
            row.earlier = present
        elif row.earlier is True:
            field = join(text("," + key), rendered)
        else:
            separator = pc.if_else(row.earlier, text(","), text(""))
            field = join(separator, text(key), rendered)
            row.earlier = pc.or_(row.earlier, present)
        row.array(pc.fill_null(field, text("")))
    return row.close(closing)


def escape_strings(values: Array, ascii_only: bool) -> Array:
    """String contents escaped as ``json.dumps`` escapes them, without the quotes."""
    python_rows = None
    # json.dumps escapes control characters, and with ensure_ascii also DEL (0x7f): ASCII, yet
    # not printable.
    control = (*_CONTROL, "\x7f") if ascii_only else _CONTROL
    if buffer_contains(values, control):
        pattern = "[\\x00-\\x1f\\x7f]" if ascii_only else "[\\x00-\\x1f]"
        python_rows = pc.match_substring_regex(values, pattern)
    if ascii_only and not _buffer_is_ascii(values):
        non_ascii = pc.invert(pc.string_is_ascii(values))
        python_rows = non_ascii if python_rows is None else pc.or_(python_rows, non_ascii)
    simple = contains_any(values, ('"', "\\"))
    if simple is not None:
        if python_rows is not None:
            simple = pc.and_not(simple, pc.fill_null(python_rows, False))
        values = patch(values, simple, _escape_quotes)
    if python_rows is not None:
        encoder = json.JSONEncoder(ensure_ascii=ascii_only)
        values = patch(values, python_rows, lambda rows: _encode_each(rows, encoder))
    return values


def _buffer_is_ascii(values: Array) -> bool:
    return character_data(values).isascii()


def _escape_quotes(values: Array) -> Array:
    return pc.replace_substring(pc.replace_substring(values, "\\", "\\\\"), '"', '\\"')


def _encode_each(values: Array, encoder: json.JSONEncoder) -> Array:
    return pa.array([encoder.encode(value)[1:-1] for value in values.to_pylist()], TEXT)

