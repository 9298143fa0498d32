"""Context rules for parsed templates: target shape, characters, traversal, symbols, encoding.

The rules work on :class:`Piece` rows (column, text, is_symbol) so that they need nothing from
the public template types. Every refusal is a :class:`DponeError` with a ``template.*`` code and
the 1-based column of the offending character (for a placeholder, the column of its ``{``).
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterator, Sequence
from typing import Final, NamedTuple
from urllib.parse import quote, unquote, unquote_to_bytes

from dpone.contracts import DponeError, Location


class Piece(NamedTuple):
    """One literal run or placeholder of a template, with its 1-based start column."""

    column: int
    text: str
    is_symbol: bool


def fail(code: str, message: str, column: int) -> DponeError:
    return DponeError(code=code, message=message, location=Location(column=column))


FIXED_SYMBOLS: Final = frozenset(
    {"resource", "delivery_key", "receiver_mutation_key", "scope.from", "scope.to"}
)
_RECEIPT_SYMBOL: Final = re.compile(r"receipt\.[a-z_][a-z0-9_]{0,63}")

_UNRESERVED: Final = frozenset(string.ascii_letters + string.digits + "-._~")
_PCHAR_OTHER: Final = frozenset("!$&'()*+,;=:@")
_HEX: Final = frozenset(string.hexdigits)
_CONTROL_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Outside the path a bare `name:` prefix is ordinary text (`created:desc`); it is a scheme when
# `//` follows or when it names a well-known URI scheme.
_KNOWN_SCHEMES: Final = frozenset(
    {
        "blob", "data", "file", "ftp", "ftps", "gs", "http", "https", "javascript", "jar",
        "ldap", "ldaps", "mailto", "s3", "sftp", "ssh", "tel", "urn", "vbscript", "ws", "wss",
    }
)
# Query values are percent-encoded down to RFC 3986 query characters, minus the separators a
# form decoder would split on (`&`, `=`, `+`, `;`).
QUERY_SAFE: Final = "!$'()*,:@/?"
_MAX_DECODE_ROUNDS: Final = 8
_ENCODED_SEPARATOR: Final = re.compile(r"%(?:25)*(?:2[fF]|5[cC])")


def is_control(ch: str, *, forbid_space: bool) -> bool:
    """C0/C1 controls, DEL, format and separator characters, and whitespace other than space."""
    if ch == " ":
        return forbid_space
    code = ord(ch)
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or ch.isspace()
        or unicodedata.category(ch) in _CONTROL_CATEGORIES
    )


def check_target(pieces: Sequence[Piece], *, path: bool) -> None:
    """Refuse an absolute URL, a network-path reference and (for paths) a relative path."""
    head = pieces[0].text if pieces and not pieces[0].is_symbol else ""
    if head.startswith("//"):
        raise fail("template.absolute_url", "the template starts with an authority (`//`)", 1)
    match = _SCHEME.match(head)
    if match is not None:
        scheme = match.group()[:-1].lower()
        if path or head[match.end():].startswith("//") or scheme in _KNOWN_SCHEMES:
            raise fail("template.absolute_url", f"the template has a scheme ({scheme}:)", 1)
    if path and not pieces:
        raise fail("template.syntax", "a path template cannot be empty", 1)
    if path and not head.startswith("/"):
        raise fail("template.absolute_url", "a path template must start with '/'", 1)


def check_controls(pieces: Sequence[Piece], *, forbid_space: bool) -> None:
    for piece in _literals(pieces):
        for offset, ch in enumerate(piece.text):
            if is_control(ch, forbid_space=forbid_space):
                kind = "whitespace" if ch.isspace() else "a control character"
                raise fail(
                    "template.control_character",
                    f"the template contains {kind} ({ch!r})",
                    piece.column + offset,
                )


def path_segments(pieces: Sequence[Piece]) -> list[list[Piece]]:
    """Split a path template into its segments; the first (before the leading `/`) is empty."""
    segments: list[list[Piece]] = [[]]
    for piece in pieces:
        if piece.is_symbol:
            segments[-1].append(piece)
            continue
        column = piece.column
        for index, run in enumerate(piece.text.split("/")):
            if index:
                segments.append([])
            if run:
                segments[-1].append(Piece(column, run, False))
            column += len(run) + 1
    return segments


def _decodings(text: str) -> Iterator[str]:
    """The text and each successive percent-decoding of it (double encoding included)."""
    yield text
    for _ in range(_MAX_DECODE_ROUNDS):
        decoded = unquote(text, errors="replace")
        if decoded == text:
            return
        yield decoded
        text = decoded


def is_dot_segment(segment: str) -> bool:
    """True when any decoding of the segment is `.` or `..` (also before a `;` parameter)."""
    for decoded in _decodings(segment):
        for candidate in (decoded, unicodedata.normalize("NFKC", decoded)):
            if candidate.split(";", 1)[0] in {".", ".."}:
                return True
    return False


def check_traversal(segments: Sequence[Sequence[Piece]]) -> None:
    for segment in segments:
        for piece in segment:
            if piece.is_symbol:
                continue
            backslash = piece.text.find("\\")
            if backslash >= 0:
                raise fail("template.traversal", "the path contains a backslash",
                           piece.column + backslash)
            for decoded in list(_decodings(piece.text))[1:]:
                if "/" in decoded or "\\" in decoded:
                    match = _ENCODED_SEPARATOR.search(piece.text)
                    offset = match.start() if match else piece.text.find("%")
                    raise fail("template.traversal",
                               "the path contains an encoded '/' or '\\'",
                               piece.column + offset)
        if segment and not any(piece.is_symbol for piece in segment):
            text = "".join(piece.text for piece in segment)
            if is_dot_segment(text):
                raise fail("template.traversal",
                           f"the path has a dot segment ({text!r})", segment[0].column)


def check_path_characters(pieces: Sequence[Piece]) -> None:
    for piece in _literals(pieces):
        text = piece.text
        for offset, ch in enumerate(text):
            column = piece.column + offset
            if ch == "%":
                if not (len(text) >= offset + 3 and set(text[offset + 1:offset + 3]) <= _HEX):
                    raise fail("template.syntax", "'%' must start a %XX escape", column)
            elif ch == "?":
                raise fail("template.syntax",
                           "a path cannot contain '?'; the query belongs in the query map",
                           column)
            elif ch == "#":
                raise fail("template.syntax", "a path cannot contain a fragment ('#')", column)
            elif ch != "/" and ch not in _UNRESERVED and ch not in _PCHAR_OTHER:
                raise fail("template.syntax",
                           f"{ch!r} is not allowed in a path; percent-encode it", column)
        for run_start, run in _slash_runs(text):
            try:
                unquote_to_bytes(run).decode("utf-8")
            except UnicodeDecodeError:
                high = re.search(r"%[89a-fA-F][0-9a-fA-F]", run)
                offset = run_start + (high.start() if high else 0)
                raise fail("template.syntax", "the percent-encoding is not valid UTF-8",
                           piece.column + offset) from None


def _slash_runs(text: str) -> Iterator[tuple[int, str]]:
    start = 0
    for run in text.split("/"):
        yield start, run
        start += len(run) + 1


def check_placement(segments: Sequence[Sequence[Piece]]) -> None:
    """A placeholder is a whole segment, or its prefix or suffix; two never touch."""
    for segment in segments:
        last = len(segment) - 1
        for index, piece in enumerate(segment):
            if not piece.is_symbol:
                continue
            if 0 < index < last:
                raise fail("template.syntax",
                           "a placeholder must be a whole path segment or its prefix or suffix",
                           piece.column)
            if index and segment[index - 1].is_symbol:
                raise fail("template.syntax",
                           "two placeholders cannot be adjacent in a path segment",
                           piece.column)


def check_text_characters(pieces: Sequence[Piece]) -> None:
    for piece in _literals(pieces):
        for offset, ch in enumerate(piece.text):
            if not " " <= ch <= "~":
                raise fail("template.syntax", f"{ch!r} is not printable ASCII",
                           piece.column + offset)


def check_symbols(pieces: Sequence[Piece], *, allow_receipt: bool) -> None:
    for piece in pieces:
        if not piece.is_symbol or piece.text in FIXED_SYMBOLS:
            continue
        if _RECEIPT_SYMBOL.fullmatch(piece.text):
            if allow_receipt:
                continue
            message = f"{{{piece.text}}}: receipt fields are not available in this template"
        else:
            message = f"{{{piece.text}}} is not a template symbol"
        raise fail("template.unknown_symbol", message, piece.column)


def utf8(value: str, column: int) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise fail("template.control_character", "the value contains an unpaired surrogate",
                   column) from None


def encode_path_value(value: str, column: int) -> str:
    """Percent-encode everything but unreserved characters, so a value stays in its segment."""
    return quote(utf8(value, column), safe="")


def encode_query(text: str, column: int) -> str:
    return quote(utf8(text, column), safe=QUERY_SAFE)


def check_field_value(value: str, column: int, *, header: bool) -> str:
    """A header or multipart scalar value: no control characters; headers are ASCII only."""
    utf8(value, column)
    for ch in value:
        if is_control(ch, forbid_space=False):
            raise fail("template.control_character",
                       f"the value contains a control character ({ch!r})", column)
        if header and not ch.isascii():
            raise fail("template.syntax", f"a header value must be ASCII ({ch!r})", column)
    return value


def _literals(pieces: Sequence[Piece]) -> Iterator[Piece]:
    return (piece for piece in pieces if not piece.is_symbol)
