"""Authoring files in an older format are refused naming their migration note; the notes, the
changelog and the schemas say the same thing as the rule table (dpone/compiler/migrations.py)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dpone.cli.main import cli
from dpone.compiler import load_environment
from dpone.compiler.migrations import (
    AUTHORING_FORMATS,
    CHANGELOG,
    CHANGES,
    INDEX,
    MIGRATIONS_DIR,
    format_version,
    notes_of,
)
from dpone.compiler.schemas import SCHEMA_DIR
from dpone.contracts import ERROR_CATALOG, ExitClass
from support.cli_documents import published_document
from support.common import EXAMPLES, ROOT, assert_no_traceback, run_dpone

CODE = "authoring.migration_required"
SYNC = "workloads/measurements_sync.yaml"
ASYNC = "workloads/measurements_async.yaml"
ENVIRONMENT = "environments/local-dev.yaml"
BINDING = "bindings/mock_measurements.yaml"
BATCH_PROFILE = "profiles/mock.batch-ndjson@1.yaml"
JOBS_PROFILE = "profiles/mock.dataset-jobs@1.yaml"


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the example changed shape: {old!r}"
    return text.replace(old, new)


def _environment_without_policies(text: str) -> str:
    policies = re.search(r"^# Platform-owned.*?^network_policies:\n(?:  [^\n]*\n)+", text,
                         re.MULTILINE | re.DOTALL)
    assert policies is not None, "the example environment changed shape"
    return text.replace(policies.group(0), "")


def _idempotency_fence(*, stated: str = "") -> Callable[[str], str]:
    """The sync profile fenced by an Idempotency-Key header rendered from the key, certified,
    with ``stated`` fence lines (the current format states location and value_from)."""
    def edit(text: str) -> str:
        text = _edit(text, '    X-Delivery-Key: "{delivery_key}"\n',
                     '    X-Delivery-Key: "{delivery_key}"\n'
                     '    Idempotency-Key: "{receiver_mutation_key}"\n')
        return _edit(text, "mutation_fence:\n  type: none\n",
                     "mutation_fence:\n  type: idempotency_key_header\n" + stated
                     + "  header_name: Idempotency-Key\n"
                     "  certification_ref: required_before_production\n"
                     "  certified_environments: [local-dev]\n")
    return edit


def _schema_line(value: str | None) -> Callable[[str], str]:
    def edit(text: str) -> str:
        line = re.search(r"^schema: .*\n", text, re.MULTILINE)
        assert line is not None
        return text.replace(line.group(0), "" if value is None else f"schema: {value}\n")
    return edit


@dataclass(frozen=True)
class OldShape:
    """A copy of the example registry with one file in an older format."""

    file: str
    edit: Callable[[str], str]
    workload: str
    path: str
    note: str
    message: str

    def registry(self, tmp_path: Path) -> Path:
        root = tmp_path / "registry"
        shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".dpone", "__pycache__"))
        target = root / self.file
        target.write_text(self.edit(target.read_text("utf-8")), "utf-8")
        return root

    def line(self, root: Path) -> int:
        """The line the refusal names: the mapping that should hold the field (for ``schema``
        and top-level fields, the document's first key)."""
        lines = (root / self.file).read_text("utf-8").splitlines()
        block = self.path.split(".")[0] if "." in self.path else None
        for number, text in enumerate(lines, start=1):
            if (block and text.startswith(f"{block}:")) or (
                    not block and text and not text.startswith("#")):
                return number
        raise AssertionError(f"no line for {self.path} in {self.file}")


SHAPES = {
    "environment_without_policies": OldShape(
        ENVIRONMENT, _environment_without_policies, SYNC, "tls_policies",
        "environment-tls-network-policies.md", "neither tls_policies nor network_policies"),
    "idempotency_fence_without_location": OldShape(
        BATCH_PROFILE, lambda text: _idempotency_fence()(text).replace(
            "  certified_environments: [local-dev]\n",
            "  certified_environments: [local-dev]\n  key_payload_binding: required\n"),
        SYNC, "mutation_fence.location", "idempotency-fence-location.md",
        "location: header, value_from: receiver_mutation_key"),
    "certified_fence_without_payload_binding": OldShape(
        JOBS_PROFILE, lambda text: _edit(text, "  key_payload_binding: required\n", ""),
        ASYNC, "mutation_fence.key_payload_binding", "enforced-policy-values.md",
        "key_payload_binding: required"),
    "environment_format_v0": OldShape(
        ENVIRONMENT, _schema_line("dpone.environment.v0"), SYNC, "schema", "README.md",
        "dpone.environment.v0 is an older version of this format"),
    "workload_format_v0": OldShape(
        SYNC, _schema_line("dpone.batch.v0"), SYNC, "schema", "README.md",
        "dpone.batch.v0 is an older version"),
    "binding_without_schema": OldShape(
        BINDING, _schema_line(None), SYNC, "schema", "README.md",
        "states no format version"),
}


def _check(root: Path, workload: str, *extra: str) -> Result:
    return CliRunner().invoke(cli, ["check", str(root / workload), "--registry", str(root), *extra])


def test_the_code_is_in_the_catalog_with_the_validation_exit_code() -> None:
    spec = ERROR_CATALOG[CODE]
    assert spec.exit_class is ExitClass.INVALID is ERROR_CATALOG["schema.missing_field"].exit_class
    assert MIGRATIONS_DIR in spec.operator_action


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_an_old_file_is_refused_in_text_with_its_file_line_and_note(name: str,
                                                                    tmp_path: Path) -> None:
    shape = SHAPES[name]
    root = shape.registry(tmp_path)
    result = _check(root, shape.workload)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert_no_traceback(result)
    assert result.stdout == ""
    where = f"{root / shape.file}:{shape.line(root)}:1 ({shape.path})"
    assert result.stderr.startswith(f"error: {where}\n"), result.stderr
    assert f"  {CODE}: " in result.stderr
    assert shape.message in result.stderr
    (hint,) = re.findall(r"^  hint: (.*)$", result.stderr, re.MULTILINE)
    assert f"{MIGRATIONS_DIR}/{shape.note}" in hint


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_an_old_file_is_refused_in_json(name: str, tmp_path: Path) -> None:
    shape = SHAPES[name]
    root = shape.registry(tmp_path)
    result = _check(root, shape.workload, "--format", "json")
    assert result.exit_code == 2
    assert_no_traceback(result)
    document = published_document(result.stdout)
    assert (document["code"], document["exit_code"]) == (CODE, 2)
    assert document["location"] == {"file": str(root / shape.file), "line": shape.line(root),
                                    "column": 1, "path": shape.path}
    assert document["details"]["note"] == f"{MIGRATIONS_DIR}/{shape.note}"
    assert f"{MIGRATIONS_DIR}/{shape.note}" in document["hint"]


def test_the_refusal_comes_before_the_generic_error_of_the_same_fields(tmp_path: Path) -> None:
    """Without the rules the environment would be `binding.unknown_policy` at the binding, a
    schema-less binding `schema.missing_field`, the fence `profile.fence_inconsistent`."""
    for name, generic in [("environment_without_policies", "binding.unknown_policy"),
                          ("binding_without_schema", "schema.missing_field"),
                          ("idempotency_fence_without_location", "profile.fence_inconsistent"),
                          ("certified_fence_without_payload_binding",
                           "profile.fence_not_payload_bound")]:
        shape = SHAPES[name]
        root = shape.registry(tmp_path / name)
        result = _check(root, shape.workload)
        assert CODE in result.stderr and generic not in result.stderr, (name, result.stderr)


def test_a_file_older_than_two_changes_names_both(tmp_path: Path) -> None:
    shape = OldShape(BATCH_PROFILE, _idempotency_fence(), SYNC, "mutation_fence.location",
                     "idempotency-fence-location.md", "")
    root = shape.registry(tmp_path)
    result = _check(root, SYNC, "--format", "json")
    document = published_document(result.stdout)
    assert document["details"]["note"] == f"{MIGRATIONS_DIR}/idempotency-fence-location.md"
    (also,) = document["details"]["more"]
    assert also.startswith(f"{root / BATCH_PROFILE}:")
    assert f"(mutation_fence.key_payload_binding): {CODE}: " in also
    assert "key_payload_binding: required" in also


def test_a_real_process_prints_no_traceback(tmp_path: Path) -> None:
    shape = SHAPES["environment_without_policies"]
    root = shape.registry(tmp_path)
    proc = run_dpone("check", str(root / SYNC), "--registry", str(root), cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert f"{CODE}: " in proc.stderr
    assert f"{MIGRATIONS_DIR}/environment-tls-network-policies.md" in proc.stderr


@pytest.mark.parametrize("name", ["environment_without_policies",
                                  "idempotency_fence_without_location",
                                  "certified_fence_without_payload_binding"])
def test_the_edit_the_note_describes_makes_the_file_compile(name: str, tmp_path: Path) -> None:
    shape = SHAPES[name]
    root = shape.registry(tmp_path)
    target = root / shape.file
    text = target.read_text("utf-8")
    if name == "environment_without_policies":
        text += ('tls_policies:\n  loopback-plaintext@1: {require_https: false, min_version: "1.2"}\n'
                 'network_policies:\n  loopback-only@1: {allow: [127.0.0.0/8, "::1/128"]}\n')
    elif name == "idempotency_fence_without_location":
        text = _edit(text, "  type: idempotency_key_header\n", "  type: idempotency_key_header\n"
                     "  location: header\n  value_from: receiver_mutation_key\n")
    else:
        text = _edit(text, "  certified_environments: [local-dev]\n\n",
                     "  certified_environments: [local-dev]\n  key_payload_binding: required\n\n")
    target.write_text(text, "utf-8")
    result = _check(root, shape.workload)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("ok: ")


def test_an_environment_read_for_its_control_plane_needs_no_policies(tmp_path: Path) -> None:
    """The policies matter where a binding names them; `--environment NAME` on a recovery
    machine reads only the control plane."""
    path = tmp_path / "local-dev.yaml"
    path.write_text(_environment_without_policies((EXAMPLES / ENVIRONMENT).read_text("utf-8")),
                    "utf-8")
    environment = load_environment(path, "local-dev")
    assert environment.tls_policies == environment.network_policies == {}
    assert environment.control_plane is not None and environment.leases.ttl_s == 60


def test_a_newer_format_version_is_not_a_migration(tmp_path: Path) -> None:
    shape = OldShape(SYNC, _schema_line("dpone.batch.v2"), SYNC, "schema", "README.md", "")
    root = shape.registry(tmp_path)
    document = published_document(_check(root, SYNC, "--format", "json").stdout)
    assert document["code"] == "schema.invalid_value"


def test_the_examples_compile_unchanged() -> None:
    for workload in (SYNC, ASYNC):
        result = _check(EXAMPLES, workload)
        assert result.exit_code == 0, result.stderr


# --------------------------------------------------------------------------- notes and schemas


def _notes_on_disk() -> set[str]:
    return {path.name for path in (ROOT / MIGRATIONS_DIR).glob("*.md")} - {"README.md"}


def _links(markdown: str) -> set[str]:
    return set(re.findall(r"\]\(([^)#\s]+)\)", markdown))


def test_every_note_a_rule_names_exists_and_every_note_is_named_by_a_rule() -> None:
    named = {change.note for change in CHANGES}
    assert len(named) == len(CHANGES), "one note per change"
    assert named == _notes_on_disk()
    assert (ROOT / INDEX).is_file()


@pytest.mark.parametrize("change", CHANGES, ids=lambda change: change.note)
def test_each_note_says_what_changed_before_after_and_how_to_check(change: Any) -> None:
    text = (ROOT / change.path).read_text("utf-8")
    assert text.startswith("# ")
    assert change.date in text
    for commit in change.commits:
        assert commit in text
    for heading in ("## What changed", "## Why", "## Before and after", "## Check"):
        assert f"\n{heading}\n" in text, (change.note, heading)
    assert text.count("```yaml") >= 2
    assert "$ dpone check " in text and CODE in text and change.path in text
    assert change.schema in text


def test_every_note_is_linked_from_the_changelog_and_the_index() -> None:
    changelog = _links((ROOT / CHANGELOG).read_text("utf-8"))
    index = (ROOT / INDEX).read_text("utf-8").splitlines()
    for change in CHANGES:
        assert change.path in changelog, change.path
        (row,) = [line for line in index if line.startswith(f"| {change.date} |")
                  and f"]({change.note})" in line]
        assert all(commit in row for commit in change.commits), row


def test_the_index_lists_each_format_s_notes_as_its_schema_does() -> None:
    rows = [line for line in (ROOT / INDEX).read_text("utf-8").splitlines()
            if line.startswith("| ") and ".schema.json" in line]
    assert len(rows) == len(AUTHORING_FORMATS)
    for schema_id in AUTHORING_FORMATS:
        (row,) = [row for row in rows if f"`{schema_id}`" in row]
        listed = {link for link in _links(row) if not link.endswith(".schema.json")}
        assert listed == {path.removeprefix(f"{MIGRATIONS_DIR}/") for path in notes_of(schema_id)}


@pytest.mark.parametrize("schema_id", AUTHORING_FORMATS)
def test_each_authoring_schema_states_its_format_version_and_notes(schema_id: str) -> None:
    schema = json.loads((SCHEMA_DIR / f"{schema_id}.schema.json").read_text("utf-8"))
    assert schema["properties"]["schema"]["const"] == schema_id
    assert schema["x-dpone-format-version"] == format_version(schema_id) == 1
    assert schema["x-dpone-migration-notes"] == list(notes_of(schema_id))
    assert schema["x-dpone-migrations"] == INDEX and schema["x-dpone-changelog"] == CHANGELOG
    for note in schema["x-dpone-migration-notes"]:
        assert (ROOT / note).is_file()


def test_only_authoring_schemas_carry_a_format_version() -> None:
    for path in SCHEMA_DIR.glob("*.schema.json"):
        schema = json.loads(path.read_text("utf-8"))
        authoring = path.name.removesuffix(".schema.json") in AUTHORING_FORMATS
        assert ("x-dpone-format-version" in schema) is authoring, path.name


# --------------------------------------------------------------------------- the changelog

SECTIONS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
VERSION = re.compile(r"^## \[(?P<version>Unreleased|\d+\.\d+\.\d+(?:[-.][0-9A-Za-z.]+)?)\]"
                     r"(?: - (?P<date>\d{4}-\d{2}-\d{2}))?$")


def test_the_changelog_follows_keep_a_changelog() -> None:
    text = (ROOT / CHANGELOG).read_text("utf-8")
    lines = text.splitlines()
    assert lines[0] == "# Changelog"
    assert "https://keepachangelog.com/en/1.1.0/" in text
    assert "https://semver.org/" in text
    versions = [line for line in lines if line.startswith("## ")]
    assert versions and versions[0] == "## [Unreleased]"
    for heading in versions:
        matched = VERSION.match(heading)
        assert matched, heading
        assert (matched["version"] == "Unreleased") is (matched["date"] is None), heading
    sections: list[list[str]] = []
    entries = 0
    for line in lines[lines.index(versions[0]):]:
        if line.startswith("## "):
            sections.append([])
        elif line.startswith("### "):
            name = line.removeprefix("### ")
            assert name in SECTIONS, line
            sections[-1].append(name)
            entries = 0
        elif line.startswith("- "):
            entries += 1
        assert not line.startswith("#### "), line
    for names in sections:
        assert names, "a version without sections"
        assert names == sorted(names, key=SECTIONS.index), names
        assert len(names) == len(set(names)), names
    assert not re.search(r"^### .*\n+(?=###|## |\Z)", text, re.MULTILINE), "an empty section"
    assert entries > 0


def test_the_changelog_names_the_version_in_development() -> None:
    from dpone import __version__  # noqa: PLC0415

    assert f"`{__version__}`" in (ROOT / CHANGELOG).read_text("utf-8")
