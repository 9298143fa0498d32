"""RFC 6901 JSON pointers (``pointer.lark``), used to extract receipt fields from responses."""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from dpone.contracts import DponeError, Location


class _Missing(enum.Enum):
    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing.MISSING
"""What :meth:`JsonPointer.resolve` returns when the pointer names no value."""

_ARRAY_INDEX: Final = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True, slots=True)
class JsonPointer:
    """A parsed pointer: its source text and its unescaped reference tokens."""

    source: str
    tokens: tuple[str, ...]

    def resolve(self, document: Any) -> Any:
        """The value the pointer names in ``document``, or :data:`MISSING`.

        Objects are walked by key; arrays by canonical index only (no sign, no leading zero,
        never ``-``).
        """
        node = document
        for token in self.tokens:
            if isinstance(node, Mapping):
                if token not in node:
                    return MISSING
                node = node[token]
            elif isinstance(node, list | tuple):
                if _ARRAY_INDEX.fullmatch(token) is None or int(token) >= len(node):
                    return MISSING
                node = node[int(token)]
            else:
                return MISSING
        return node

    def __str__(self) -> str:
        return self.source


class _PointerTransformer(Transformer[Token, tuple[str, ...]]):
    def start(self, tokens: list[str]) -> tuple[str, ...]:
        return tuple(tokens)

    def token(self, pieces: list[str]) -> str:
        return "".join(pieces)

    def plain(self, children: list[Token]) -> str:
        return str(children[0])

    def tilde(self, _: list[Token]) -> str:
        return "~"

    def slash(self, _: list[Token]) -> str:
        return "/"


@functools.cache
def _parser() -> Lark:
    return Lark.open("pointer.lark", rel_to=__file__, parser="lalr")


@functools.lru_cache(maxsize=1024)
def parse_pointer(text: str) -> JsonPointer:
    """Parse an RFC 6901 pointer; refuse with a ``pointer.syntax`` DponeError and its column.

    A profile's few pointers are read on every response: each is parsed once (a refusal is
    raised again each time, never cached)."""
    try:
        tokens = _PointerTransformer().transform(_parser().parse(text))
    except UnexpectedInput as exc:
        raise _failure(text, exc) from exc
    return JsonPointer(source=text, tokens=tokens)


def _failure(text: str, exc: UnexpectedInput) -> DponeError:
    position = exc.pos_in_stream
    if position is None or not 0 <= position < len(text):
        position = len(text)
    ch = text[position] if position < len(text) else ""
    if ch == "~":
        message = "'~' must be followed by 0 or 1 (write '~0' for '~' and '~1' for '/')"
    elif ch and (ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F):
        message = f"a JSON pointer cannot contain a control character ({ch!r})"
    else:
        message = "a JSON pointer must be empty or start with '/'"
    return DponeError(code="pointer.syntax", message=message,
                      location=Location(column=position + 1))
