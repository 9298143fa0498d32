"""No policy field is accepted without being enforced or refused at compile time.

The test walks every leaf field of ``OperationProfile`` and ``ConnectionBinding`` (pydantic
``model_fields``, recursively, ``*`` for a map key) and requires an entry for it in
``dpone/contracts/design/policy-enforcement.v1.yaml``: the enforcing code (``module:function``,
imported here) and the test that proves it (``file::test``, found here). A field still being
made enforced (``pending: <branch>``) or enforced nowhere (``gap: <what>``) is listed by
``test_every_policy_field_is_enforced``, which fails until none is left.
"""

from __future__ import annotations

import ast
import functools
import importlib
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from ruamel.yaml import YAML

from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.profile import OperationProfile
from support.common import ROOT

TABLE = ROOT / "dpone" / "contracts" / "design" / "policy-enforcement.v1.yaml"
ROOTS: tuple[type[BaseModel], ...] = (OperationProfile, ConnectionBinding)


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models(arg)]


def _is_map(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _is_map(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_is_map(arg) for arg in typing.get_args(annotation))
    return origin is dict


def leaves(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, str]]:
    """``(path, "Model.field")`` of every leaf field under ``model``."""
    for name, field in model.model_fields.items():
        key = field.alias or name
        path = f"{prefix}.{key}"
        nested = _models(field.annotation)
        if not nested:
            yield path, f"{model.__name__}.{key}"
        for sub in nested:
            yield from leaves(sub, path + (".*" if _is_map(field.annotation) else ""))


@functools.cache
def table() -> dict[str, Any]:
    loaded: dict[str, Any] = YAML(typ="safe").load(TABLE.read_text(encoding="utf-8"))
    assert loaded["schema"] == "dpone.policy_enforcement.v1"
    return loaded


def entry(path: str, model_field: str) -> dict[str, str] | None:
    found = table()["fields"].get(path) or table()["models"].get(model_field)
    return dict(found) if found is not None else None


def all_leaves() -> list[tuple[str, str]]:
    return [leaf for root in ROOTS for leaf in leaves(root, root.__name__)]


def _entries() -> list[tuple[str, dict[str, str]]]:
    listed = {**table()["models"], **table()["fields"]}
    return sorted((key, dict(value)) for key, value in listed.items())


def test_the_walk_finds_the_known_fields() -> None:
    found = dict(all_leaves())
    assert found["OperationProfile.rate.submit_per_minute"] == "Rate.submit_per_minute"
    assert found["OperationProfile.acknowledgement.receipt.*.body_json_pointer"] == (
        "Extractor.body_json_pointer")
    assert found["ConnectionBinding.remote_identity.valid_until"] == "RemoteIdentity.valid_until"
    assert len(found) >= 160


def test_every_policy_field_has_an_entry() -> None:
    missing = [path for path, model_field in all_leaves() if entry(path, model_field) is None]
    assert not missing, (
        f"{len(missing)} policy field(s) without an entry in {TABLE.name} (name the enforcing "
        "code and its test, or pending/gap):\n  " + "\n  ".join(missing))


def test_every_entry_names_a_field_that_exists() -> None:
    paths = {path for path, _ in all_leaves()}
    model_fields = {model_field for _, model_field in all_leaves()}
    stale = [key for key in table()["fields"] if key not in paths]
    stale += [key for key in table()["models"] if key not in model_fields]
    assert not stale, f"entries for fields that no longer exist: {stale}"


def _resolve(reference: str) -> object:
    module_name, _, qualname = reference.partition(":")
    target: object = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


@functools.cache
def _test_names(file: str) -> frozenset[str]:
    tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
    return frozenset(node.name for node in ast.walk(tree)
                     if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))


@pytest.mark.parametrize(("key", "value"), _entries(), ids=[key for key, _ in _entries()])
def test_each_entry_names_real_code_and_a_real_test(key: str, value: dict[str, str]) -> None:
    kinds = {"code", "test"} if "code" in value else set(value)
    assert set(value) == kinds and kinds in ({"code", "test"}, {"pending"}, {"gap"}), (
        f"{key}: an entry is {{code, test}}, {{pending}} or {{gap}}, not {sorted(value)}")
    if "code" not in value:
        assert str(next(iter(value.values()))).strip(), f"{key}: say which branch or what"
        return
    assert callable(_resolve(value["code"])), f"{key}: {value['code']} is not callable"
    file, _, name = value["test"].partition("::")
    assert Path(ROOT / file).is_file(), f"{key}: no test file {file}"
    assert name.startswith("test_") and name in _test_names(file), (
        f"{key}: {file} has no test {name}")


def test_every_policy_field_is_enforced() -> None:
    """Fails, naming them, while a policy field is only pending or enforced nowhere."""
    open_fields = []
    for path, model_field in all_leaves():
        found = entry(path, model_field) or {}
        if "code" not in found:
            reason = found.get("pending", "") and f"pending: {found['pending']}"
            open_fields.append(f"{path} ({reason or 'gap: ' + found.get('gap', 'no entry')})")
    assert not open_fields, (
        f"{len(open_fields)} policy field(s) accepted without an enforcing entry:\n  "
        + "\n  ".join(open_fields))
