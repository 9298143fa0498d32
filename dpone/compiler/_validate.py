"""Validate loaded YAML against a strict model; render every error with file, line and path."""

from __future__ import annotations

import difflib
import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from dpone.compiler._yaml import LoadedDocument, YamlPath, render_path
from dpone.contracts import DponeError

M = TypeVar("M", bound=BaseModel)

_TYPE_TO_CODE = {"extra_forbidden": "schema.unknown_field", "missing": "schema.missing_field"}


def _field_names(model: type[BaseModel], seen: set[type[BaseModel]] | None = None) -> set[str]:
    """Every field name (by alias) anywhere in a model tree, for "did you mean" hints."""
    seen = seen if seen is not None else set()
    if model in seen:
        return set()
    seen.add(model)
    names: set[str] = set()
    for name, info in model.model_fields.items():
        names.add(info.alias or name)
        for candidate in _nested_models(info.annotation):
            names |= _field_names(candidate, seen)
    return names


def _nested_models(annotation: Any) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.append(annotation)
    for arg in getattr(annotation, "__args__", ()) or ():
        found.extend(_nested_models(arg))
    for meta in getattr(annotation, "__metadata__", ()) or ():
        found.extend(_nested_models(meta))
    origin = getattr(annotation, "__origin__", None)
    if origin is not None and origin is not annotation:
        found.extend(_nested_models(origin))
    return found


def _data_path(data: Any, loc: tuple[int | str, ...]) -> tuple[YamlPath, bool]:
    """Map a pydantic error location onto the data path, skipping union tags and validator names.

    Returns the path and whether the last element of ``loc`` exists in the data.
    """
    path: list[str | int] = []
    current = data
    found_last = True
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        in_dict = isinstance(current, dict) and isinstance(part, str) and part in current
        in_list = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if in_dict or in_list:
            path.append(part)
            current = current[part]
        elif last:
            path.append(part)
            found_last = False
    return tuple(path), found_last


def _one(error: Any, doc: LoadedDocument, known: set[str]) -> DponeError:
    kind = str(error["type"])
    path, exists = _data_path(doc.data, tuple(error["loc"]))
    code = _TYPE_TO_CODE.get(kind, "schema.invalid_value")
    location = doc.locate(path if exists else path[:-1])
    location = type(location)(location.file, location.line, location.column, render_path(path))
    hint = None
    if code == "schema.unknown_field" and path and isinstance(path[-1], str):
        close = difflib.get_close_matches(path[-1], sorted(known), n=1, cutoff=0.75)
        if close:
            hint = f"did you mean {close[0]!r}?"
        message = f"unknown field {path[-1]!r}"
    elif code == "schema.missing_field":
        message = f"missing required field {path[-1]!r}" if path else "missing required field"
    else:
        message = str(error["msg"]).removeprefix("Value error, ")
        if "input" in error and not isinstance(error["input"], dict | list):
            message += f" (got {json.dumps(error['input'], default=str)[:80]})"
    return DponeError(code=code, message=message, location=location, hint=hint)


def validate_document(model: type[M], doc: LoadedDocument) -> M:
    """Validate in JSON mode (strict types, ISO dates from strings) and fail on the first error.

    All further errors ride along in ``details["more"]`` so a person sees every problem at once.
    """
    try:
        return model.model_validate_json(json.dumps(doc.data))
    except ValidationError as exc:
        known = _field_names(model)
        errors = sorted(
            (_one(error, doc, known) for error in exc.errors()),
            # A misspelt key explains the "missing" error it causes: show it first.
            key=lambda e: (e.code != "schema.unknown_field",
                           (e.location.line or 0) if e.location else 0),
        )
        first = errors[0]
        first.details["more"] = [str(other) for other in errors[1:20]]
        raise first from None
