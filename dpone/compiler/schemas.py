"""Draft 2020-12 JSON Schemas generated from the closed models, checked in under contracts/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from dpone.compiler._field_docs import describe
from dpone.compiler.migrations import AUTHORING_FORMATS, schema_annotations
from dpone.contracts.binding import (
    BINDING_SCHEMA_ID,
    ENVIRONMENT_SCHEMA_ID,
    ConnectionBinding,
    EnvironmentDocument,
)
from dpone.contracts.documents import ARTIFACT_DOCUMENTS, DOCUMENTS
from dpone.contracts.mapping import MAPPING_SCHEMA_ID, PayloadMapping
from dpone.contracts.plan import PLAN_SCHEMA_ID, RestDeliveryPlan
from dpone.contracts.profile import PROFILE_SCHEMA_ID, OperationProfile
from dpone.contracts.source_parent import SOURCE_PARENT_SCHEMA_ID, SourceParent
from dpone.contracts.workload import WORKLOAD_SCHEMA_ID, Workload

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "contracts" / "schemas"

MODELS: dict[str, Any] = {
    WORKLOAD_SCHEMA_ID: Workload,
    PROFILE_SCHEMA_ID: OperationProfile,
    BINDING_SCHEMA_ID: ConnectionBinding,
    ENVIRONMENT_SCHEMA_ID: EnvironmentDocument,
    MAPPING_SCHEMA_ID: PayloadMapping,
    PLAN_SCHEMA_ID: RestDeliveryPlan,
    SOURCE_PARENT_SCHEMA_ID: SourceParent,
    **DOCUMENTS,
    **ARTIFACT_DOCUMENTS,
}
"""Schema id -> the model (or annotated union of models) its schema is generated from: every
authored and compiled artifact, every ``--format json`` document of the CLI, and the documents
that are not command output (operator evidence, reconciliations, the fault matrix's record)."""


def _close(node: Any) -> None:
    """Every object schema is closed: ``additionalProperties: false`` unless it is a map."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        for value in node.values():
            _close(value)
    elif isinstance(node, list):
        for value in node:
            _close(value)


def schema_for(schema_id: str) -> dict[str, Any]:
    source = MODELS[schema_id]
    if isinstance(source, type) and issubclass(source, BaseModel):
        body = source.model_json_schema(by_alias=True, mode="validation")
    else:
        body = TypeAdapter(source).json_schema(by_alias=True, mode="validation")
    describe(body, source)
    _close(body)
    if schema_id in AUTHORING_FORMATS:
        body.update(schema_annotations(schema_id))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://dpone.dev/schemas/{schema_id}.json",
        **body,
    }


def render(schema_id: str) -> str:
    return json.dumps(schema_for(schema_id), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_all(directory: Path = SCHEMA_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for schema_id in MODELS:
        path = directory / f"{schema_id}.schema.json"
        path.write_text(render(schema_id), encoding="utf-8")
        written.append(path)
    return written
