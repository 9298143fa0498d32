"""Grammars: typed request templates and RFC 6901 JSON pointers.

Both grammars live in ``.lark`` files next to their loaders. Every refusal is a
:class:`dpone.contracts.DponeError` with a ``template.*`` or ``pointer.syntax`` code and the
1-based column of the offending character.
"""

from dpone.grammar._pointer import MISSING, JsonPointer, parse_pointer
from dpone.grammar._template import (
    Literal,
    Placeholder,
    Template,
    TemplateContext,
    parse_template,
)

__all__ = [
    "MISSING",
    "JsonPointer",
    "Literal",
    "Placeholder",
    "Template",
    "TemplateContext",
    "parse_pointer",
    "parse_template",
]
