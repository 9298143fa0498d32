"""docs/security/threat-model.md names, for each threat of the specification's list, the code
that enforces its control and the tests that prove it: every name must exist, so the page
cannot drift from the code."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[3]
PAGE: Final = ROOT / "docs" / "security" / "threat-model.md"
THREATS: Final = ("Journal rewind", "Generation rollback", "Remote-principal swap",
                  "Cross-tenant collision", "Cross-tenant leakage", "Object-store compromise",
                  "Namespace reset", "Profile revocation", "SSRF / redirects",
                  "Triggerer exhaustion", "Semaphore loss", "Evidence leakage")
_TEST = re.compile(r"`((?:airflow/)?tests/[\w/]+\.py)?::(\w+)`")
_CODE = re.compile(r"`(dpone(?:_airflow)?(?:\.\w+)+):([\w.]+)`")


def _rows() -> list[str]:
    return [line for line in PAGE.read_text(encoding="utf-8").splitlines()
            if line.startswith("| ") and not line.startswith(("| threat", "|---"))]


def test_every_threat_of_the_spec_has_a_row_with_code_and_tests() -> None:
    rows = _rows()
    for threat in THREATS:
        row = next((r for r in rows if r.startswith(f"| {threat}")), None)
        assert row is not None, f"no row for {threat!r}"
        assert _TEST.search(row), f"{threat!r} names no test"


def test_every_named_test_exists() -> None:
    missing = []
    for row in _rows():
        current: str | None = None
        for path, name in _TEST.findall(row):
            current = path or current
            assert current is not None, row[:60]
            source = (ROOT / current).read_text(encoding="utf-8")
            if f"def {name}(" not in source:
                missing.append(f"{current}::{name}")
    assert not missing, f"tests named by the threat model that do not exist: {missing}"


def test_every_named_enforcing_code_exists() -> None:
    missing = []
    for row in _rows():
        for module, attribute in _CODE.findall(row):
            if module.startswith("dpone_airflow"):
                path = ROOT / "airflow" / Path(*module.split(".")).with_suffix(".py")
                if f"class {attribute.split('.')[0]}" not in path.read_text(encoding="utf-8"):
                    missing.append(f"{module}:{attribute}")
                continue
            target: object = importlib.import_module(module)
            for part in attribute.split("."):
                target = getattr(target, part, None)
            if target is None:
                missing.append(f"{module}:{attribute}")
    assert not missing, f"enforcing code named by the threat model that does not exist: {missing}"
