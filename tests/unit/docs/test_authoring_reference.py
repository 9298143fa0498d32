"""docs/reference/authoring-fields.md is generated from the authoring JSON Schemas and stays so."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest
from ruamel.yaml import YAML

from support.common import EXAMPLES, ROOT

SCRIPT = ROOT / "scripts" / "generate_authoring_reference.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_authoring_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _generator()


def test_checked_in_reference_matches_the_schemas() -> None:
    assert gen.OUTPUT.read_text("utf-8") == gen.render(), (
        "docs/reference/authoring-fields.md is stale: run "
        ".venv/bin/python scripts/generate_authoring_reference.py and review the diff")


def test_check_mode_passes_on_the_checked_in_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert gen.main(["--check"]) == 0
    assert "is current" in capsys.readouterr().out


def test_check_mode_fails_on_a_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "authoring-fields.md"
    stale.write_text(gen.render().replace("Hard limit on rows per child.", "Rows."), "utf-8")
    assert gen.main(["--check", "--output", str(stale)]) == 1
    assert "is stale" in capsys.readouterr().err
    assert gen.main(["--output", str(stale)]) == 0
    assert stale.read_text("utf-8") == gen.render()


def _schemas_copy(tmp_path: Path) -> Path:
    target = tmp_path / "schemas"
    shutil.copytree(gen.SCHEMA_DIR, target)
    return target


def test_a_new_schema_field_without_a_meaning_is_refused(tmp_path: Path) -> None:
    schemas = _schemas_copy(tmp_path)
    path = schemas / "dpone.operation_profile.v1.schema.json"
    schema = json.loads(path.read_text("utf-8"))
    schema["$defs"]["Limits"]["properties"]["max_parts_per_day"] = {"type": "integer", "default": 8}
    path.write_text(json.dumps(schema), "utf-8")
    with pytest.raises(gen.MeaningsMismatch, match=r"Limits\.max_parts_per_day has no meaning"):
        gen.render(schema_dir=schemas)


def test_a_meaning_for_a_removed_field_is_refused(tmp_path: Path) -> None:
    schemas = _schemas_copy(tmp_path)
    path = schemas / "dpone.batch.v1.schema.json"
    schema = json.loads(path.read_text("utf-8"))
    del schema["$defs"]["DeliveryOverrides"]["properties"]["preferred_window_days"]
    path.write_text(json.dumps(schema), "utf-8")
    with pytest.raises(gen.MeaningsMismatch,
                       match=r"DeliveryOverrides\.preferred_window_days is described but the "
                             r"schema has no such field"):
        gen.render(schema_dir=schemas)


def test_every_field_row_carries_the_schema_bounds_and_default() -> None:
    text = gen.render()
    assert ("| `preferred_window_days` | integer or null | default `null` | 1..366 |"
            in text)
    assert "| `max_children` | integer | default `10000` | 1..100_000 |" in text
    assert "| `empty_input` | string | default `skip` | one of `skip`, `promote` |" in text
    assert "| `rejected_before_effect_statuses` | list of integer | default `[]` | each 400..499 |" in text


def test_every_registry_example_is_an_authoring_schema_the_reference_covers() -> None:
    yaml = YAML(typ="safe", pure=True)
    seen = {yaml.load(path.read_text("utf-8"))["schema"] for path in EXAMPLES.glob("*/*.yaml")}
    assert seen == set(gen.AUTHORING_SCHEMAS)


def test_every_negative_fixture_is_indexed() -> None:
    text = gen.render()
    cases = sorted(p.name for p in gen.NEGATIVE.iterdir() if (p / "expect.json").is_file())
    assert cases
    for case in cases:
        assert f"[`{case}`](../../tests/unit/compiler/negative/{case}/)" in text
