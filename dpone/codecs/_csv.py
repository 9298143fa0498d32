"""Deterministic CSV: every field is formatted with Arrow kernels, then rows are joined.

Rules (profile-owned parameters come from :class:`~dpone.contracts.profile.CsvCodec`):

- UTF-8; a BOM first when ``bom``; ``line_terminator`` after every row, the last included;
  a header row of the mapping's column names, in mapping order, when ``header``.
- ``quoting: needed`` (RFC 4180): a non-null string is quoted when it contains the delimiter,
  ``"``, CR or LF, or when it equals a bare ``null``/``empty_string`` token (so it cannot be
  read back as one). ``quoting: all_strings``: every non-null, non-empty string is quoted.
  Quotes inside a quoted field are doubled. Header names follow the ``needed`` rule in both
  modes (mapping column names are identifiers, so they are written bare). Other types are
  never quoted: their text cannot contain a structural character.
- A null (any type) is the ``null`` token; a non-null empty string is the ``empty_string``
  token (default ``""``, a quoted empty field). The two are distinct by profile validation,
  and a ``null`` token that a typed column could also produce (``0``, ``true``...) is refused,
  as is an empty token that would make a one-column row an empty line.
- int64 exact decimal; float64 Python ``repr`` (see ``_floats``); bool ``true``/``false``;
  date ``YYYY-MM-DD``; timestamp ``YYYY-MM-DDTHH:MM:SS[.fff|.ffffff]Z`` at
  ``timestamp_precision``, UTC.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow.compute as pc

from dpone.codecs._arrow import (
    Array,
    any_true,
    as_text,
    buffer_contains,
    contains_any,
    join,
    patch,
    text,
    text_bytes,
)
from dpone.codecs._columns import Batches, Slice, format_scalar, probe_arrow_text, slices
from dpone.codecs._errors import PayloadEncodingError
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.profile import CsvCodec

_BOM = b"\xef\xbb\xbf"
_QUOTED_EMPTY = '""'
# Texts a typed (non-string) column can produce; a bare null token must not be one of them.
_TYPED_TEXT = {
    "int64": r"-?[0-9]+",
    "float64": r"-?[0-9]+\.[0-9]+|-?[0-9](?:\.[0-9]+)?e[+-][0-9]+",
    "bool": r"true|false",
    "date": r"[0-9]{4}-[0-9]{2}-[0-9]{2}",
    "timestamp": r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?Z",
}


@dataclass(frozen=True, slots=True)
class _Dialect:
    codec: CsvCodec
    specials: tuple[str, ...]  # the characters that force quoting
    bare_tokens: tuple[str, ...]  # non-empty unquoted tokens a string value must not look like

    @classmethod
    def of(cls, codec: CsvCodec, mapping: PayloadMapping) -> _Dialect:
        specials = (codec.delimiter, '"', "\r", "\n")
        for name, token in (("null", codec.null), ("empty_string", codec.empty_string)):
            if token != _QUOTED_EMPTY and any(char in token for char in specials):
                raise PayloadEncodingError(
                    f"the {name} token {token!r} contains the delimiter, a quote or a line break"
                )
        if codec.null == _QUOTED_EMPTY:
            raise PayloadEncodingError('the null token cannot be the quoted empty field ""')
        for column in mapping.columns:
            pattern = _TYPED_TEXT.get(column.type)
            if pattern and codec.null and re.fullmatch(pattern, codec.null):
                raise PayloadEncodingError(
                    f"the null token {codec.null!r} is also a valid {column.type} value",
                    column=column.name,
                )
        if len(mapping.columns) == 1:
            only = mapping.columns[0]
            if (only.nullable and not codec.null) or (only.type == "string" and not codec.empty_string):
                raise PayloadEncodingError(
                    "a one-column CSV would write this value as an empty line, which readers "
                    "skip: give the null/empty_string token a visible encoding", column=only.name)
        bare = tuple(t for t in (codec.null, codec.empty_string) if t and t != _QUOTED_EMPTY)
        return cls(codec, specials, bare)

    def header(self, names: list[str]) -> bytes:
        specials = self.specials
        fields = []
        for name in names:
            needs = any(char in name for char in specials) or name in self.bare_tokens
            fields.append('"' + name.replace('"', '""') + '"' if needs else name)
        line = self.codec.delimiter.join(fields) + self.codec.line_terminator
        return line.encode("utf-8")


def encode_csv(batches: Batches, mapping: PayloadMapping, codec: CsvCodec) -> Iterator[bytes]:
    """Encode rows as CSV bytes, streamed one slice at a time (see the module rules).

    The codec and mapping are checked before the first chunk is requested; values are checked
    as they stream (:class:`PayloadEncodingError` names the column and row).
    """
    probe_arrow_text()
    dialect = _Dialect.of(codec, mapping)
    return _stream(batches, mapping, dialect)


def _stream(batches: Batches, mapping: PayloadMapping, dialect: _Dialect) -> Iterator[bytes]:
    yield from _frame(dialect, mapping)
    for piece in slices(batches, mapping):
        if piece.batch.num_rows:
            yield text_bytes(_lines(piece, mapping, dialect))


def _frame(dialect: _Dialect, mapping: PayloadMapping) -> Iterator[bytes]:
    if dialect.codec.bom:
        yield _BOM
    if dialect.codec.header:
        yield dialect.header([column.name for column in mapping.columns])


def csv_frame(codec: CsvCodec, mapping: PayloadMapping) -> bytes:
    """The bytes before the first line (BOM, header); the codec and mapping are checked."""
    return b"".join(_frame(_Dialect.of(codec, mapping), mapping))


def csv_row_texts(batches: Batches, mapping: PayloadMapping, codec: CsvCodec) -> Iterator[Array]:
    """Each input slice's lines, one terminated line per row (see :mod:`dpone.codecs._rows`)."""
    dialect = _Dialect.of(codec, mapping)
    return (_lines(piece, mapping, dialect) for piece in slices(batches, mapping)
            if piece.batch.num_rows)


def _lines(piece: Slice, mapping: PayloadMapping, dialect: _Dialect) -> Array:
    codec = dialect.codec
    fields = []
    for column, values in zip(mapping.columns, piece.batch.columns, strict=True):
        if column.type == "string":
            formatted = _string_field(as_text(values), dialect)
        else:
            formatted = format_scalar(values, column, codec.timestamp_precision, piece.first_row)
        if formatted.null_count:
            formatted = pc.fill_null(formatted, text(codec.null))
        fields.append(formatted)
    last = join(fields.pop(), text(codec.line_terminator))
    return join(*fields, last, separator=codec.delimiter)


def _quote(values: Array) -> Array:
    if buffer_contains(values, ('"',)):
        values = pc.replace_substring(values, '"', '""')
    return join(text('"'), values, text('"'))


def _string_field(values: Array, dialect: _Dialect) -> Array:
    """Strings with quoting applied and empties as the empty_string token; nulls stay null."""
    codec = dialect.codec
    empty = pc.equal(pc.binary_length(values), 0)
    if codec.quoting == "all_strings":
        values = _quote(values)
    else:
        needs = contains_any(values, dialect.specials)
        for token in dialect.bare_tokens:
            same = pc.equal(values, text(token))
            needs = same if needs is None else pc.or_(needs, same)
        if needs is not None:
            values = patch(values, needs, _quote)
    if any_true(empty):
        values = pc.if_else(empty, text(codec.empty_string), values)
    return values
