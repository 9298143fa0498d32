"""The example workloads compile; their digests move only when semantics or policy move."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpone.cli.main import cli
from dpone.compiler import compile_workload
from dpone.compiler._yaml import load_yaml_file
from dpone.contracts import canonical_json, content_digest
from support.cli_documents import published_document
from support.common import EXAMPLES

WORKLOADS = ["measurements_async", "measurements_sync"]
ASYNC_PROFILE = "profiles/mock.dataset-jobs@1.yaml"


def _compile(root: Path, name: str = "measurements_async"):
    return compile_workload(root / "workloads" / f"{name}.yaml", root)


@pytest.mark.parametrize("name", WORKLOADS)
def test_check_exits_zero_on_examples(name: str) -> None:
    result = CliRunner().invoke(
        cli, ["check", str(EXAMPLES / "workloads" / f"{name}.yaml"), "--registry", str(EXAMPLES),
              "--format", "json"])
    assert result.exit_code == 0, result.output
    document = published_document(result.stdout)
    assert document["status"] == "ok"
    assert document["digests"]["plan"].startswith("sha256:")


@pytest.mark.parametrize("name", WORKLOADS)
def test_plan_digest_is_content_address_and_stable(name: str, tmp_path: Path) -> None:
    runner = CliRunner()
    digests = []
    for _ in range(2):
        result = runner.invoke(cli, ["plan", str(EXAMPLES / "workloads" / f"{name}.yaml"),
                                     "--registry", str(EXAMPLES), "--out", str(tmp_path),
                                     "--format", "json"])
        assert result.exit_code == 0, result.output
        digests.append(published_document(result.stdout)["plan_digest"])
    assert digests[0] == digests[1]
    written = tmp_path / "plans" / "sha256" / f"{digests[0].removeprefix('sha256:')}.json"
    assert content_digest(written.read_bytes()) == digests[0]
    assert written.read_bytes() == canonical_json(json.loads(written.read_bytes()))


def test_digest_is_the_same_in_a_fresh_process() -> None:
    code = ("from pathlib import Path; from dpone.compiler import compile_workload; "
            f"print(compile_workload(Path({str(EXAMPLES / 'workloads' / 'measurements_async.yaml')!r}),"
            f" Path({str(EXAMPLES)!r})).digest)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == _compile(EXAMPLES).digest


def _reformat(path: Path) -> None:
    """Rewrite a YAML file as flow-style JSON with keys reversed, no comments, odd spacing."""
    def reverse(node: object) -> object:
        if isinstance(node, dict):
            return {k: reverse(node[k]) for k in reversed(list(node))}
        if isinstance(node, list):
            return [reverse(v) for v in node]
        return node
    data = reverse(load_yaml_file(path).data)
    path.write_text("# reformatted\n" + json.dumps(data, indent=7, ensure_ascii=False) + "\n\n",
                    encoding="utf-8")


@pytest.mark.parametrize("relative", [
    "workloads/measurements_async.yaml", ASYNC_PROFILE, "bindings/mock_measurements.yaml",
    "mappings/mock.measurements.v1.yaml", "environments/local-dev.yaml"])
def test_cosmetic_edits_keep_the_digest(registry: Path, relative: str) -> None:
    before = _compile(registry).digest
    _reformat(registry / relative)
    assert _compile(registry).digest == before


def test_comments_and_whitespace_keep_the_digest(registry: Path) -> None:
    before = _compile(registry).digest
    profile = registry / ASYNC_PROFILE
    text = profile.read_text("utf-8").replace("\n", "   # trailing comment\n")
    profile.write_text("\n\n# a new leading comment\n" + text, encoding="utf-8")
    assert _compile(registry).digest == before


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_timeout_changes_policy_not_semantics(registry: Path) -> None:
    before = _compile(registry).plan.profile
    _edit(registry / ASYNC_PROFILE, "read_s: 30", "read_s: 45")
    after = _compile(registry).plan.profile
    assert after.execution_policy_digest != before.execution_policy_digest
    assert after.operation_semantics_digest == before.operation_semantics_digest
    assert after.profile_contract_digest != before.profile_contract_digest


@pytest.mark.parametrize(("old", "new"), [
    ("method: POST", "method: PUT"),
    ("path: /mock/v1/dataset-jobs\n", "path: /mock/v2/dataset-jobs\n"),
])
def test_method_or_path_changes_semantics(registry: Path, old: str, new: str) -> None:
    before = _compile(registry).plan.profile
    _edit(registry / ASYNC_PROFILE, old, new)
    after = _compile(registry).plan.profile
    assert after.operation_semantics_digest != before.operation_semantics_digest
    assert after.execution_policy_digest == before.execution_policy_digest


def test_credential_rotation_keeps_binding_identity(registry: Path) -> None:
    before = _compile(registry).plan.binding.receiver_binding_semantics_digest
    _edit(registry / "bindings/mock_measurements.yaml", "env:DPONE_CONN_MOCK_MEASUREMENTS_TOKEN",
          "env:DPONE_CONN_MOCK_MEASUREMENTS_TOKEN_V2")
    assert _compile(registry).plan.binding.receiver_binding_semantics_digest == before


def test_principal_swap_changes_binding_identity(registry: Path) -> None:
    before = _compile(registry).plan
    _edit(registry / "bindings/mock_measurements.yaml", "remote_account_id: mock-account",
          "remote_account_id: other-account")
    after = _compile(registry).plan
    assert after.binding.receiver_binding_semantics_digest != before.binding.receiver_binding_semantics_digest
    assert after.effect_conflict_domain != before.effect_conflict_domain


def test_namespace_revision_changes_namespace_only(registry: Path) -> None:
    before = _compile(registry).plan
    _edit(registry / "environments/local-dev.yaml", "namespace_revision: 1", "namespace_revision: 2")
    after = _compile(registry).plan
    assert after.environment.operation_namespace != before.environment.operation_namespace
    assert after.effect_conflict_domain == before.effect_conflict_domain
    assert after.profile == before.profile


def test_override_changes_plan_not_profile(registry: Path) -> None:
    before = _compile(registry).plan
    _edit(registry / "workloads/measurements_async.yaml", "preferred_window_days: 3",
          "preferred_window_days: 2")
    after = _compile(registry).plan
    assert after.effective_limits.window_days == 2
    assert after.profile == before.profile


def test_plan_holds_what_the_runtime_needs() -> None:
    plan = _compile(EXAMPLES).plan
    assert plan.source.registry_path == "data/measurements.csv"
    assert plan.fence.type == "receiver_duplicate_key" and plan.fence.certified_in_environment
    assert plan.source_boundary.receiver_atomic_scope
    assert plan.planner_algorithm_version == "dpone.adaptive_window_planner.v2"
    assert "protocol.async_bulk_job" in plan.required_capabilities
    sync = _compile(EXAMPLES, "measurements_sync").plan
    assert not sync.fence.certified_in_environment
    assert not sync.source_boundary.receiver_atomic_scope
