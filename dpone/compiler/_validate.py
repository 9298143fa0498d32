"""Validate loaded YAML against a strict model; render every error with file, line and path."""

from __future__ import annotations

import difflib
import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from dpone.compiler._yaml import LoadedDocument, YamlPath, render_path
from dpone.compiler.migrations import format_of, refuse_older_format
from dpone.contracts import DponeError

M = TypeVar("M", bound=BaseModel)

_TYPE_TO_CODE = {"extra_forbidden": "schema.unknown_field", "missing": "schema.missing_field"}


def _fields_at(model: type[BaseModel], parent: tuple[int | str, ...]) -> set[str]:
    """The field names (by alias) valid at ``parent``, for "did you mean" hints.

    Follows the error location through nested models; parts that are not fields (list
    indexes, union tags, mapping keys) keep the current candidates.
    """
    candidates = [model]
    for part in parent:
        if isinstance(part, int):
            continue
        following: list[type[BaseModel]] = []
        for candidate in candidates:
            for name, info in candidate.model_fields.items():
                if part in (name, info.alias):
                    following.extend(_nested_models(info.annotation))
        candidates = following or candidates
    return {info.alias or name for c in candidates for name, info in c.model_fields.items()}


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


def _one(error: Any, doc: LoadedDocument, model: type[BaseModel]) -> DponeError:
    kind = str(error["type"])
    path, exists = _data_path(doc.data, tuple(error["loc"]))
    code = _TYPE_TO_CODE.get(kind, "schema.invalid_value")
    location = doc.locate(path if exists else path[:-1])
    location = type(location)(location.file, location.line, location.column, render_path(path))
    hint = None
    if code == "schema.unknown_field" and path and isinstance(path[-1], str):
        known = sorted(_fields_at(model, tuple(error["loc"])[:-1]) - {path[-1]})
        close = difflib.get_close_matches(path[-1], known, n=1, cutoff=0.75)
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

    An authoring file in an older format is refused first, naming its migration note
    (:mod:`dpone.compiler.migrations`). All further errors ride along in ``details["more"]`` so
    a person sees every problem at once.
    """
    schema_id = format_of(model)
    if schema_id is not None:
        refuse_older_format(doc, schema_id)
    try:
        return model.model_validate_json(json.dumps(doc.data))
    except ValidationError as exc:
        errors = sorted(
            (_one(error, doc, model) for error in exc.errors()),
            # A misspelt key explains the "missing" error it causes: show it first.
            key=lambda e: (e.code != "schema.unknown_field",
                           (e.location.line or 0) if e.location else 0),
        )
        first = errors[0]
        first.details["more"] = [str(other) for other in errors[1:20]]
        raise first from None
