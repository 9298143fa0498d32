"""Profile checks' shared means: a refusal located in the YAML, parsed templates and pointers."""

from __future__ import annotations

from typing import Any

from dpone.compiler._yaml import LoadedDocument, YamlPath
from dpone.contracts import DponeError, Location
from dpone.grammar import TemplateContext, parse_pointer, parse_template


def located_error(code: str, message: str, doc: LoadedDocument, path: YamlPath,
                  hint: str | None = None) -> DponeError:
    """A catalog error at ``path`` of ``doc`` (file, line and dotted YAML path)."""
    return DponeError(code=code, message=message, location=doc.locate(path), hint=hint)


def located_template(doc: LoadedDocument, path: YamlPath, text: str, context: TemplateContext,
                     allow_receipt: bool = False) -> dict[str, Any]:
    """The canonical parsed template; a grammar refusal names the YAML line and its column."""
    try:
        return parse_template(text, context=context, allow_receipt=allow_receipt).canonical()
    except DponeError as exc:
        base = doc.locate(path)
        column = exc.location.column if exc.location else None
        raise DponeError(code=exc.code, message=f"{exc.message} in {text!r}",
                         location=Location(base.file, base.line, column, base.path)) from None


def located_pointer(doc: LoadedDocument, path: YamlPath, text: str | None) -> None:
    """Refuse an RFC 6901 pointer that does not parse (``None``: no pointer given)."""
    if text is None:
        return
    try:
        parse_pointer(text)
    except DponeError as exc:
        raise located_error(exc.code, f"{exc.message} in {text!r}", doc, path) from None


def template_symbols(template: dict[str, Any]) -> set[str]:
    """The symbols a canonical parsed template carries."""
    return {str(part["symbol"]) for part in template["parts"] if "symbol" in part}
