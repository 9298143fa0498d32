"""Checked-in JSON Schemas match the models, are closed, and accept the examples."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dpone.compiler import compile_workload
from dpone.compiler._yaml import load_yaml_file
from dpone.compiler.schemas import MODELS, SCHEMA_DIR, render
from support.common import EXAMPLES


@pytest.mark.parametrize("schema_id", sorted(MODELS))
def test_checked_in_schema_matches_model(schema_id: str) -> None:
    path = SCHEMA_DIR / f"{schema_id}.schema.json"
    assert path.read_text("utf-8") == render(schema_id), (
        f"{path.name} drifted from the model: run scripts/generate_schemas.py and review")


def _objects(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


@pytest.mark.parametrize("schema_id", sorted(MODELS))
def test_schema_is_draft_2020_12_and_closed(schema_id: str) -> None:
    schema = json.loads((SCHEMA_DIR / f"{schema_id}.schema.json").read_text("utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert all(obj.get("additionalProperties") is False for obj in _objects(schema))


@pytest.mark.parametrize(("schema_id", "relative"), [
    ("dpone.batch.v1", "workloads/measurements_async.yaml"),
    ("dpone.batch.v1", "workloads/measurements_sync.yaml"),
    ("dpone.operation_profile.v1", "profiles/mock.dataset-jobs@1.yaml"),
    ("dpone.operation_profile.v1", "profiles/mock.batch-ndjson@1.yaml"),
    ("dpone.connection_binding.v1", "bindings/mock_measurements.yaml"),
    ("dpone.environment.v1", "environments/local-dev.yaml"),
    ("dpone.payload_mapping.v1", "mappings/mock.measurements.v1.yaml"),
])
def test_examples_validate_against_schemas(schema_id: str, relative: str) -> None:
    schema = json.loads((SCHEMA_DIR / f"{schema_id}.schema.json").read_text("utf-8"))
    document = load_yaml_file(EXAMPLES / relative).data
    Draft202012Validator(schema).validate(document)


def test_unknown_field_is_refused_by_schema_too() -> None:
    schema = json.loads((SCHEMA_DIR / "dpone.batch.v1.schema.json").read_text("utf-8"))
    document = load_yaml_file(EXAMPLES / "workloads/measurements_async.yaml").data
    document["sink"]["request_path"] = "/x"
    assert list(Draft202012Validator(schema).iter_errors(document))


def test_compiled_plan_validates_against_plan_schema() -> None:
    schema = json.loads((SCHEMA_DIR / "dpone.rest_delivery_plan.v1.schema.json").read_text("utf-8"))
    compiled = compile_workload(EXAMPLES / "workloads/measurements_async.yaml", EXAMPLES)
    Draft202012Validator(schema).validate(json.loads(compiled.canonical))
