"""Typed receipt/state extraction from a bounded response.

The JSON body is parsed only within the profile's :class:`ResponseBounds`: at most
``max_body_bytes``, nesting depth ``max_depth`` (checked by a scan *before* parsing, so a deep
document cannot exhaust the parser's stack), ``max_fields`` object members plus array elements,
and ``max_string_bytes`` UTF-8 bytes per key or string. A header extractor with a ``location`` rule
takes only the one segment below its ``path_prefix`` of a relative location, or of an absolute
location of exactly the origin the transport sent to (``Response.origin``); any other location is
refused (``location_refused``), so a receipt never names another origin. Duplicate object keys,
NaN/Infinity and non-UTF-8 bodies are refused, as is any ``Content-Encoding`` other than
identity. Every refusal is an :class:`ExtractionError` (``REST_DELIVERY_PROTOCOL_UNKNOWN``) whose
``reason`` says which bound or rule; messages name extractors and pointers, never response content.

Types: ``string`` takes a JSON string (or a JSON integer, rendered in base 10); ``integer``
takes a JSON integer (never a boolean or a float). Header extractors read the allowlisted
response headers; ``integer`` headers must be optionally signed decimal digits. ``null`` counts
as absent. A missing ``required`` field is refused; a missing optional field is omitted.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from dpone.contracts import DponeError
from dpone.contracts.profile import Extractor, ResponseBounds
from dpone.contracts.transport import Response
from dpone.executor.transport._location import location_receipt
from dpone.grammar import MISSING, parse_pointer

_TOKENS: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_INTEGER: Final = re.compile(r"[+-]?[0-9]{1,18}")
_UNPARSED: Final = object()


class ExtractionFailure(enum.StrEnum):
    BODY_TOO_LARGE = "body_too_large"
    TOO_DEEP = "too_deep"
    TOO_MANY_FIELDS = "too_many_fields"
    STRING_TOO_LONG = "string_too_long"
    INVALID_JSON = "invalid_json"
    DUPLICATE_KEY = "duplicate_key"
    UNSUPPORTED_ENCODING = "unsupported_encoding"
    MISSING = "missing"
    WRONG_TYPE = "wrong_type"
    LOCATION_REFUSED = "location_refused"


@dataclass(eq=False, kw_only=True)
class ExtractionError(DponeError):
    """A response that breaks a bound or an extractor's contract."""

    reason: ExtractionFailure


def _refuse(reason: ExtractionFailure, message: str, **details: Any) -> ExtractionError:
    return ExtractionError(code="REST_DELIVERY_PROTOCOL_UNKNOWN", message=message,
                           reason=reason, details={"reason": reason.value, **details})


def extract(extractors: Mapping[str, Extractor], response: Response,
            bounds: ResponseBounds | None = None) -> dict[str, str | int]:
    """The typed value of every extractor present in ``response`` (see the module docstring)."""
    bounds = bounds or ResponseBounds()
    document: Any = _UNPARSED
    values: dict[str, str | int] = {}
    for name, extractor in extractors.items():
        source: str
        raw: Any
        if extractor.header is not None:
            source = f"header {extractor.header}"
            raw = response.headers.get(extractor.header.lower(), MISSING)
            if extractor.type == "integer" and isinstance(raw, str):
                if _INTEGER.fullmatch(raw.strip()) is None:
                    raise _refuse(ExtractionFailure.WRONG_TYPE,
                                  f"{name}: {source} is not an integer", field=name)
                raw = int(raw.strip())
            if extractor.location is not None and isinstance(raw, str):
                segment = location_receipt(raw, extractor.location.path_prefix,
                                           response.origin)
                if segment is None:
                    raise _refuse(ExtractionFailure.LOCATION_REFUSED,
                                  f"{name}: {source} is not a location of the binding's origin "
                                  f"under {extractor.location.path_prefix}", field=name)
                raw = segment
        else:
            pointer = parse_pointer(extractor.body_json_pointer or "")
            source = f"body pointer {pointer.source or '(root)'}"
            if document is _UNPARSED:
                _check_encoding(response)
                document = parse_bounded_json(response.body, bounds)
            raw = pointer.resolve(document)
        if raw is MISSING or raw is None:
            if extractor.required:
                raise _refuse(ExtractionFailure.MISSING, f"{name}: required {source} is absent",
                              field=name)
            continue
        values[name] = _typed(name, source, extractor, raw)
    return values


def _typed(name: str, source: str, extractor: Extractor, raw: Any) -> str | int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw if extractor.type == "integer" else str(raw)
    if isinstance(raw, str) and extractor.type == "string":
        return raw
    raise _refuse(ExtractionFailure.WRONG_TYPE,
                  f"{name}: {source} is a {type(raw).__name__}, expected {extractor.type}",
                  field=name)


def _check_encoding(response: Response) -> None:
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in {"", "identity"}:
        raise _refuse(ExtractionFailure.UNSUPPORTED_ENCODING,
                      "the response body has a content encoding; only identity is read")


def parse_bounded_json(body: bytes, bounds: ResponseBounds) -> Any:
    """Parse ``body`` as JSON within ``bounds`` or raise :class:`ExtractionError`."""
    if len(body) > bounds.max_body_bytes:
        raise _refuse(ExtractionFailure.BODY_TOO_LARGE,
                      f"response body exceeds {bounds.max_body_bytes} bytes")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(ExtractionFailure.INVALID_JSON, "response body is not UTF-8") from None
    _check_depth(text, bounds.max_depth)
    try:
        document = json.loads(text, object_pairs_hook=_unique_object, parse_constant=_no_constant)
    except ExtractionError:
        raise
    except (ValueError, RecursionError):
        raise _refuse(ExtractionFailure.INVALID_JSON, "response body is not valid JSON") from None
    _check_fields(document, bounds)
    return document


def _check_depth(text: str, max_depth: int) -> None:
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > max_depth:
                raise _refuse(ExtractionFailure.TOO_DEEP,
                              f"response JSON nests deeper than {max_depth}")
        elif token in "]}":
            depth -= 1


def _check_fields(document: Any, bounds: ResponseBounds) -> None:
    fields = 0
    pending = [document]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            fields += len(node)
            for key in node:
                _check_string(key, bounds.max_string_bytes)
            pending.extend(node.values())
        elif isinstance(node, list):
            fields += len(node)
            pending.extend(node)
        elif isinstance(node, str):
            _check_string(node, bounds.max_string_bytes)
        if fields > bounds.max_fields:
            raise _refuse(ExtractionFailure.TOO_MANY_FIELDS,
                          f"response JSON has more than {bounds.max_fields} fields")


def _check_string(value: str, max_bytes: int) -> None:
    if len(value) > max_bytes or len(value.encode("utf-8", "surrogatepass")) > max_bytes:
        raise _refuse(ExtractionFailure.STRING_TOO_LONG,
                      f"a response JSON string exceeds {max_bytes} bytes")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        raise _refuse(ExtractionFailure.DUPLICATE_KEY, "response JSON repeats an object key")
    return document


def _no_constant(name: str) -> Any:
    raise _refuse(ExtractionFailure.INVALID_JSON, f"response JSON uses the non-standard {name}")
