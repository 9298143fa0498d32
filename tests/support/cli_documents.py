"""The CLI's ``--format json`` documents, checked against the JSON Schemas the product publishes
(``dpone/contracts/schemas/<schema id>.schema.json``) and read back by their models."""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import TypeAdapter

from dpone.contracts.documents import DOCUMENTS
from support.common import ROOT

SCHEMA_DIR = ROOT / "dpone" / "contracts" / "schemas"


@functools.cache
def _validator(schema_id: str) -> Draft202012Validator:
    path = SCHEMA_DIR / f"{schema_id}.schema.json"
    assert path.is_file(), f"no published schema {path.name} for a document the CLI wrote"
    return Draft202012Validator(json.loads(path.read_text("utf-8")),
                                format_checker=Draft202012Validator.FORMAT_CHECKER)


@functools.cache
def _model(schema_id: str) -> TypeAdapter[Any]:
    return TypeAdapter(DOCUMENTS[schema_id])


def published_document(stdout: str) -> dict[str, Any]:
    """The one JSON document ``stdout`` holds, once it is proven valid against the published
    schema its ``schema`` field names and readable by that schema's model (strict)."""
    document = json.loads(stdout)
    assert isinstance(document, dict), stdout
    schema_id = document.get("schema")
    assert isinstance(schema_id, str) and schema_id in DOCUMENTS, (
        f"{schema_id!r} is not a published CLI document schema")
    errors = [f"{'/'.join(map(str, error.absolute_path)) or '(document)'}: {error.message}"
              for error in _validator(schema_id).iter_errors(document)]
    assert not errors, f"{schema_id} document does not match its schema: {errors}"
    _model(schema_id).validate_json(stdout, strict=True)
    return document
