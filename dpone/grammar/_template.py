"""Typed request templates: literal text plus ``{symbol}`` placeholders from a finite set.

``parse_template`` checks, in this order, and reports the first failure with the 1-based column
of the offending character:

1. the lexical shape (``template.lark``): nesting, unbalanced braces, ``${``, expressions inside
   a placeholder (``template.nested``), an empty placeholder (``template.syntax``);
2. the target: a scheme or authority, or a path not starting with ``/`` (``template.absolute_url``);
3. control characters, and any whitespace in a path or query (``template.control_character``);
4. for paths: dot segments and encoded separators (``template.traversal``), then RFC 3986
   ``pchar`` literals, ``?``/``#`` and placeholder placement (``template.syntax``); for the other
   contexts: printable ASCII literals (``template.syntax``);
5. symbol membership (``template.unknown_symbol``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from dpone.contracts import DponeError
from dpone.grammar import _rules
from dpone.grammar._rules import Piece, fail


class TemplateContext(StrEnum):
    """Where a template's rendered text goes; each context has its own rules and encoding."""

    PATH = "path"
    QUERY = "query"
    HEADER = "header"
    MULTIPART_SCALAR = "multipart_scalar"


@dataclass(frozen=True, slots=True)
class Literal:
    """Literal template text (wire form in a path; plain text in the other contexts)."""

    text: str

    def canonical(self) -> dict[str, str]:
        return {"literal": self.text}


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A ``{symbol}`` placeholder naming one member of the finite symbol set."""

    symbol: str

    def canonical(self) -> dict[str, str]:
        return {"symbol": self.symbol}


Part = Literal | Placeholder

_CANONICAL_SCHEMA: Final = "dpone.template.v1"
# Characters that, right after `{` or a symbol name, make a placeholder look executable:
# filters, calls, indexing, format specs and conversions, Jinja statements and comments.
_EXECUTABLE: Final = frozenset("|()[]:!%$#=*@+<>&;,'\"`\\~^?")


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed, validated template. Build it with :func:`parse_template`."""

    source: str
    context: TemplateContext
    parts: tuple[Part, ...]

    @property
    def symbols(self) -> frozenset[str]:
        return frozenset(part.symbol for part in self.parts if isinstance(part, Placeholder))

    def canonical(self) -> dict[str, Any]:
        """The parsed structure as JSON-safe data, for identity digests."""
        return {
            "schema": _CANONICAL_SCHEMA,
            "context": self.context.value,
            "parts": [part.canonical() for part in self.parts],
        }

    def render(self, values: Mapping[str, str]) -> str:
        """Substitute ``values`` with the encoding of the context.

        path: literals are kept (already wire form); a value is percent-encoded down to RFC 3986
        unreserved characters, so ``a/b`` becomes ``a%2Fb`` and can never add a segment; a value
        that renders a ``.``/``..`` segment (``template.traversal``) or an empty one
        (``template.syntax``) is refused. query: literals and values are plain text, encoded
        together as a query component. header, multipart_scalar: no encoding; a value with a
        control character is refused (``template.control_character``), and header values must
        be ASCII (``template.syntax``). A symbol without a value is ``template.unknown_symbol``.
        """
        pieces = _pieces(self.parts)
        for piece in pieces:
            if piece.is_symbol and piece.text not in values:
                raise fail("template.unknown_symbol",
                           f"no value was given for {{{piece.text}}}", piece.column)
        if self.context is TemplateContext.PATH:
            return _render_path(pieces, values)
        if self.context is TemplateContext.QUERY:
            return "".join(
                _rules.encode_query(values[p.text] if p.is_symbol else p.text, p.column)
                for p in pieces
            )
        header = self.context is TemplateContext.HEADER
        return "".join(
            _rules.check_field_value(values[p.text], p.column, header=header)
            if p.is_symbol else p.text
            for p in pieces
        )


def _render_path(pieces: list[Piece], values: Mapping[str, str]) -> str:
    rendered: list[str] = []
    for segment in _rules.path_segments(pieces)[1:]:
        text = "".join(
            _rules.encode_path_value(values[p.text], p.column) if p.is_symbol else p.text
            for p in segment
        )
        symbol = next((p for p in segment if p.is_symbol), None)
        if symbol is not None and not text:
            raise fail("template.syntax",
                       f"the value of {{{symbol.text}}} renders an empty path segment",
                       symbol.column)
        if symbol is not None and _rules.is_dot_segment(text):
            raise fail("template.traversal",
                       f"the value of {{{symbol.text}}} renders a dot segment ({text!r})",
                       symbol.column)
        rendered.append(text)
    return "/" + "/".join(rendered)


class _TemplateTransformer(Transformer[Token, tuple[Part, ...]]):
    def start(self, parts: list[Part]) -> tuple[Part, ...]:
        return tuple(parts)

    def literal(self, children: list[Token]) -> Literal:
        return Literal(str(children[0]))

    def placeholder(self, children: list[Token]) -> Placeholder:
        return Placeholder(str(children[0]))


@functools.cache
def _parser() -> Lark:
    return Lark.open("template.lark", rel_to=__file__, parser="lalr")


def parse_template(
    text: str, *, context: TemplateContext, allow_receipt: bool = False
) -> Template:
    """Parse and validate ``text`` for ``context``; refuse with a ``template.*`` DponeError.

    ``receipt.<field>`` symbols are accepted only with ``allow_receipt=True`` (templates that
    are evaluated after a receipt exists, such as a job status path).
    """
    context = TemplateContext(context)
    try:
        parts = _TemplateTransformer().transform(_parser().parse(text))
    except UnexpectedInput as exc:
        raise _lexical_failure(text, exc, context) from exc
    pieces = _pieces(parts)
    is_path = context is TemplateContext.PATH
    _rules.check_target(pieces, path=is_path)
    _rules.check_controls(pieces, forbid_space=context in _NO_SPACE)
    if is_path:
        segments = _rules.path_segments(pieces)
        _rules.check_traversal(segments)
        _rules.check_path_characters(pieces)
        _rules.check_placement(segments)
    else:
        _rules.check_text_characters(pieces)
    _rules.check_symbols(pieces, allow_receipt=allow_receipt)
    return Template(source=text, context=context, parts=parts)


_NO_SPACE: Final = frozenset({TemplateContext.PATH, TemplateContext.QUERY})


def _pieces(parts: tuple[Part, ...]) -> list[Piece]:
    pieces: list[Piece] = []
    column = 1
    for part in parts:
        if isinstance(part, Placeholder):
            pieces.append(Piece(column, part.symbol, True))
            column += len(part.symbol) + 2
        else:
            pieces.append(Piece(column, part.text, False))
            column += len(part.text)
    return pieces


def _lexical_failure(text: str, exc: UnexpectedInput, context: TemplateContext) -> DponeError:
    """Classify where the template grammar stopped into a catalog code and column."""
    position = exc.pos_in_stream
    token = getattr(exc, "token", None)
    at_end = isinstance(token, Token) and token.type == "$END"
    if position is None or at_end or not 0 <= position < len(text):
        opener = text.rfind("{")
        return fail("template.nested", "a '{' is never closed", opener + 1 if opener >= 0 else 1)
    ch = text[position]
    column = position + 1
    if ch == "{":
        return fail("template.nested", "placeholders cannot nest ('{' inside '{...}')", column)
    if ch == "}":
        if position and text[position - 1] == "{":
            return fail("template.syntax", "a placeholder cannot be empty ('{}')", position)
        return fail("template.nested", "a '}' has no matching '{'", column)
    if ch == "$":
        return fail("template.nested", "'${...}' is not a template construct", column)
    if _rules.is_control(ch, forbid_space=context in _NO_SPACE):
        return fail("template.control_character",
                    f"a placeholder contains a control character or whitespace ({ch!r})", column)
    if ch in _EXECUTABLE:
        return fail("template.nested",
                    f"placeholders hold one symbol name, not an expression ({ch!r})", column)
    return fail("template.syntax", f"{ch!r} is not allowed in a placeholder", column)
