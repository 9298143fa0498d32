"""The supervisor, the sealer and the documents import each public name on first use (PEP 562):
the names the type checker sees (``TYPE_CHECKING`` imports), ``__all__`` and the lazy table stay
one list, each name is the object its module defines, and asking for one pure policy function
does not load the HTTP client, Arrow or the grammar."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import os
import subprocess
import sys

import pytest

from support.common import ROOT

PACKAGES = ["dpone.executor.supervisor", "dpone.executor.seal", "dpone.contracts.documents"]


def _type_checking_names(package: str) -> dict[str, str]:
    """Name -> defining module of every import under ``if TYPE_CHECKING:`` in the package."""
    tree = ast.parse(inspect.getsource(importlib.import_module(package)))
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module is not None
                names.update({alias.name: statement.module for alias in statement.names})
    return names


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves_to_the_object_its_module_defines(package: str) -> None:
    module = importlib.import_module(package)
    declared = _type_checking_names(package)
    assert sorted(declared) == sorted(module.__all__)
    for name, where in declared.items():
        assert getattr(module, name) is getattr(importlib.import_module(where), name), name


@pytest.mark.parametrize("package", PACKAGES)
def test_an_unknown_name_is_an_attribute_error(package: str) -> None:
    with pytest.raises(AttributeError, match="no attribute 'not_exported'"):
        _ = importlib.import_module(package).not_exported


def _loaded_after(statement: str) -> list[str]:
    """The modules a fresh interpreter holds after ``statement``."""
    probe = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))\n"
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    return list(json.loads(ran.stdout))


def test_the_allowed_actions_policy_loads_no_transport_arrow_or_grammar() -> None:
    loaded = _loaded_after(
        "from dpone.executor.supervisor import allowed_actions, delivery_status, finished")
    assert {name.split(".")[0] for name in loaded} & {"httpx", "pyarrow", "lark"} == set()


def test_writing_one_document_creates_only_the_models_of_its_module() -> None:
    loaded = {name.rsplit(".", 1)[1] for name in
              _loaded_after("from dpone.contracts.documents import CompletedResult")
              if name.startswith("dpone.contracts.documents.")}
    assert "_delivery" in loaded
    assert not loaded & {"_plan_diff", "_fault_matrix", "_inspection", "_published"}
