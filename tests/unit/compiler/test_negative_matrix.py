"""Negative-fixture matrix: every bad authoring input fails closed.

Each case is a directory ``negative/<case>/`` holding only the files that differ from the example
registry (laid out in registry form) and ``expect.json``::

    {"code": ..., "file": <path relative to the registry root>, "line": N,
     "path": <YAML path or null>, "workload": "workloads/<name>.yaml",
     "message_contains": [...], "hint_contains": "...", "hint_excludes": "..."}   # optional

The test copies examples/ to a temporary registry, overlays the case's files and runs the CLI.
A failing input must give the expected catalog code and location, exit 2, no traceback, and
write no plan.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dpone.cli.main import cli
from dpone.contracts._errors import ERROR_CATALOG
from support.cli_documents import published_document
from support.common import EXAMPLES, assert_no_traceback, run_dpone

NEGATIVE = Path(__file__).resolve().parent / "negative"
CASES = sorted(p.name for p in NEGATIVE.iterdir() if p.is_dir())
EXPECT_KEYS = {"code", "file", "line", "path", "workload"}
OPTIONAL_KEYS = {"message_contains", "hint_contains", "hint_excludes"}

# Product defects found by this matrix. Each entry: the tests it breaks, and why. The marks are
# strict, so a test flips to XPASS (and fails) the moment the product is fixed: then delete it.
def _expect(case: str) -> dict[str, Any]:
    return json.loads((NEGATIVE / case / "expect.json").read_text(encoding="utf-8"))


def _params(test: str) -> list[Any]:
    del test  # every case holds for every rendering
    return [pytest.param(case, id=case) for case in CASES]


def _fixture_files(case: str) -> list[Path]:
    root = NEGATIVE / case
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != "expect.json")


def _registry(tmp_path: Path, case: str) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(NEGATIVE / case, root, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("expect.json"))
    return root


def _invoke(command: str, root: Path, case: str, *extra: str) -> Result:
    workload = root / _expect(case)["workload"]
    return CliRunner().invoke(cli, [command, str(workload), "--registry", str(root), *extra])


def _error_document(result: Result) -> dict[str, Any]:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert_no_traceback(result)
    document = published_document(result.stdout)  # exactly one JSON document, nothing else on stdout
    assert document["schema"] == "dpone.error.v1"
    assert document["exit_code"] == 2
    return document


def _where(expect: dict[str, Any]) -> re.Pattern[str]:
    """``<file>:<line>`` as rendered by Location.render, not followed by another digit."""
    return re.compile(re.escape("/" + expect["file"]) + f":{expect['line']}(?![0-9])")


# --------------------------------------------------------------------------- the matrix itself


def test_matrix_has_enough_cases_each_with_expectations() -> None:
    assert len(CASES) >= 36, CASES
    for case in CASES:
        path = NEGATIVE / case / "expect.json"
        assert path.is_file(), f"{case} has no expect.json"
        expect = _expect(case)
        assert EXPECT_KEYS <= set(expect) <= EXPECT_KEYS | OPTIONAL_KEYS, (case, expect)
        assert expect["code"] in ERROR_CATALOG, (case, expect["code"])
        assert ERROR_CATALOG[expect["code"]].exit_class == 2, case
        assert isinstance(expect["line"], int) and expect["line"] >= 1, case
        assert expect["path"] is None or isinstance(expect["path"], str), case
        files = _fixture_files(case)
        assert files, f"{case} overlays no file"
        for rel in (expect["file"], expect["workload"]):
            assert (NEGATIVE / case / rel).is_file() or (EXAMPLES / rel).is_file(), (case, rel)


def _normalised(data: bytes) -> bytes:
    """Fixture content without YAML comments, so a case is identified by what it breaks."""
    text = data.decode("utf-8", errors="surrogateescape")
    lines = [re.sub(r"(^|\s+)#.*$", "", line) for line in text.splitlines()]
    return "\n".join(line for line in lines if line).encode("utf-8", errors="surrogateescape")


def test_every_case_breaks_something_distinct() -> None:
    seen: dict[str, str] = {}
    for case in CASES:
        digest = hashlib.sha256()
        changed = False
        for path in _fixture_files(case):
            rel = path.relative_to(NEGATIVE / case).as_posix()
            content = _normalised(path.read_bytes())
            original = EXAMPLES / rel
            changed |= not original.is_file() or content != _normalised(original.read_bytes())
            digest.update(rel.encode() + b"\0" + content + b"\0")
        assert changed, f"{case}: its files equal the examples (comments aside)"
        key = digest.hexdigest()
        assert key not in seen, f"{case} and {seen.get(key)} break the same thing"
        seen[key] = case
        assert any(b"BROKEN" in p.read_bytes() for p in _fixture_files(case)), (
            f"{case}: mark the breaking edit with a `# BROKEN: ...` comment")


def test_examples_themselves_compile(tmp_path: Path) -> None:
    """The baseline the overlays edit is valid, so each failure is the case's own edit."""
    for workload in ("measurements_async", "measurements_sync"):
        result = CliRunner().invoke(cli, ["check", str(EXAMPLES / "workloads" / f"{workload}.yaml"),
                                          "--registry", str(EXAMPLES), "--format", "json"])
        assert result.exit_code == 0, result.stdout + result.stderr


# --------------------------------------------------------------------------- per case


@pytest.mark.parametrize("case", _params("json"))
def test_check_json_reports_code_and_location(case: str, tmp_path: Path) -> None:
    expect = _expect(case)
    root = _registry(tmp_path, case)
    document = _error_document(_invoke("check", root, case, "--format", "json"))
    assert document["code"] == expect["code"], document
    location = document["location"]
    assert location is not None, document
    assert Path(location["file"]).as_posix().endswith("/" + expect["file"]), location
    assert location["line"] == expect["line"], location
    assert location["path"] == expect["path"], location
    for needle in expect.get("message_contains", []):
        assert needle in document["message"], document["message"]
    if "hint_contains" in expect:
        assert expect["hint_contains"] in document["hint"], document["hint"]
    if "hint_excludes" in expect:
        assert expect["hint_excludes"] not in document["hint"], document["hint"]


@pytest.mark.parametrize("case", _params("plan"))
def test_plan_fails_closed_and_writes_nothing(case: str, tmp_path: Path) -> None:
    root = _registry(tmp_path, case)
    out = tmp_path / "out"
    result = _invoke("plan", root, case, "--out", str(out), "--format", "json")
    _error_document(result)
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*")), list(out.rglob("*"))


@pytest.mark.parametrize("case", _params("text"))
def test_check_text_names_code_location_and_hint(case: str, tmp_path: Path) -> None:
    expect = _expect(case)
    root = _registry(tmp_path, case)
    result = _invoke("check", root, case)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert_no_traceback(result)
    assert result.stdout == ""
    assert f"{expect['code']}:" in result.stderr, result.stderr
    assert _where(expect).search(result.stderr), result.stderr
    assert re.search(r"^\s*hint: \S", result.stderr, re.MULTILINE), result.stderr


# --------------------------------------------------------------------------- real processes

REPRESENTATIVE = ["yaml_invalid_utf8", "workload_unknown_field_typo", "binding_http_in_production",
                  "yaml_too_deep_flow_mapping"]


@pytest.mark.parametrize("case", REPRESENTATIVE)
def test_real_process_exits_two_without_traceback(case: str, tmp_path: Path) -> None:
    expect = _expect(case)
    root = _registry(tmp_path, case)
    for fmt in ("json", "text"):
        proc = run_dpone("check", str(root / expect["workload"]), "--registry", str(root),
                         "--format", fmt, cwd=tmp_path)
        assert proc.returncode == 2, (proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stdout + proc.stderr
        if fmt == "json":
            document = published_document(proc.stdout)
            assert document["schema"] == "dpone.error.v1"
            assert document["code"] == expect["code"]
            assert document["location"]["line"] == expect["line"]
        else:
            assert proc.stdout == ""
            assert expect["code"] in proc.stderr
            assert _where(expect).search(proc.stderr), proc.stderr
