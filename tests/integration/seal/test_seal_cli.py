"""`dpone seal`: text and JSON output, a stored plan digest as the target, and refusals."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpone.cli.plan import plan as plan_command
from dpone.cli.seal import seal
from support.cli_documents import published_document
from support.common import EXAMPLES
from support.seal import Sealed

WORKLOAD = EXAMPLES / "workloads" / "measurements_async.yaml"
INTERVAL = ["--interval-start", "2026-08-01", "--interval-end", "2026-09-01"]


def _invoke(tmp_path: Path, target: str, *extra: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(seal, [target, "--registry", str(EXAMPLES), *INTERVAL,
                                       "--artifacts", str(tmp_path / "artifacts"), *extra])
    return result.exit_code, result.stdout, result.stderr


def test_text_output(tmp_path: Path, sealed_examples: dict[str, Sealed]) -> None:
    topology = sealed_examples["measurements_async"].topology
    code, out, err = _invoke(tmp_path, str(WORKLOAD))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (f"sealed [2026-08-01, 2026-09-01): {topology.total_rows} rows in "
                        f"{len(topology.children)} child(ren)")
    assert lines[1].split() == ["ordinal", "scope", "rows", "decoded", "bytes", "wire", "bytes",
                                "payload"]
    first = topology.children[0]
    assert lines[2].split() == ["1", "[2026-08-01,", f"{first.descriptor.scope_to})",
                                str(first.descriptor.row_count),
                                str(first.descriptor.decoded_bytes),
                                str(first.descriptor.wire_bytes), first.payload.digest[:19]]
    assert f"  parent              {topology.parent_digest}" in lines
    assert f"  parent_plan_digest  {topology.parent_plan_digest}" in lines
    assert f"  children            {len(topology.children)}" in lines
    assert f"sealed child {len(topology.children)}/{len(topology.children)}" in err


def test_json_output(tmp_path: Path, sealed_examples: dict[str, Sealed]) -> None:
    topology = sealed_examples["measurements_async"].topology
    code, out, err = _invoke(tmp_path, str(WORKLOAD), "--format", "json")
    assert code == 0, err
    document = published_document(out)
    assert document["schema"] == "dpone.seal_result.v1"
    assert document["parent_digest"] == topology.parent_digest
    assert document["parent_plan_digest"] == topology.parent_plan_digest
    assert document["child_count"] == len(topology.children)
    assert [c["payload_digest"] for c in document["children"]] == [
        c.payload.digest for c in topology.children]
    assert document["children"][0]["scope"] == {
        "from": "2026-08-01", "to": topology.children[0].descriptor.scope_to.isoformat(),
        "part": 1, "parts": 1}
    assert (tmp_path / "artifacts" / topology.children[0].payload.key).is_file()


def test_plan_digest_target(tmp_path: Path, sealed_examples: dict[str, Sealed]) -> None:
    sealed = sealed_examples["measurements_sync"]
    plans = tmp_path / "plans"
    written = CliRunner().invoke(plan_command, [str(EXAMPLES / "workloads" /
                                                    "measurements_sync.yaml"),
                                                "--registry", str(EXAMPLES), "--out", str(plans)])
    assert written.exit_code == 0, written.output
    code, out, err = _invoke(tmp_path, sealed.plan_digest, "--plans", str(plans),
                             "--format", "json")
    assert code == 0, err
    assert published_document(out)["parent_plan_digest"] == sealed.topology.parent_plan_digest


def test_unknown_plan_digest_is_refused(tmp_path: Path) -> None:
    code, out, _ = _invoke(tmp_path, "sha256:" + "0" * 64, "--plans", str(tmp_path),
                           "--format", "json")
    assert code != 0
    assert published_document(out)["code"] == "plan.not_found"


def test_unencodable_value_names_the_column(tmp_path: Path, registry: Path) -> None:
    data = registry / "data" / "measurements.csv"
    lines = data.read_text("utf-8").splitlines()
    header = lines[0].split(",")
    row = lines[1].split(",")
    row[header.index("reading")] = "inf"
    data.write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n", "utf-8")
    result = CliRunner().invoke(seal, [str(registry / "workloads" / "measurements_async.yaml"),
                                       "--registry", str(registry), *INTERVAL, "--artifacts",
                                       str(tmp_path / "artifacts"), "--format", "json"])
    assert result.exit_code != 0
    error = published_document(result.stdout)
    assert error["code"] == "source.type_mismatch"
    assert "reading" in error["message"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_boundary_over_the_child_budget_is_refused_before_any_payload(tmp_path: Path,
                                                                        fmt: str) -> None:
    result = CliRunner().invoke(seal, [str(WORKLOAD), "--registry", str(EXAMPLES),
                                       "--interval-start", "0001-01-01",
                                       "--interval-end", "9999-12-31",
                                       "--artifacts", str(tmp_path / "artifacts"),
                                       "--format", fmt])
    assert result.exit_code == 2, result.stderr
    assert not (tmp_path / "artifacts" / "payloads").exists()
    message = ("boundary [0001-01-01, 9999-12-31) of 3652058 day(s) needs at least 1217353 "
               "children, over limits.max_children 10000")
    if fmt == "json":
        error = published_document(result.stdout)
        assert error["schema"] == "dpone.error.v1"
        assert error["code"] == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT" and error["exit_code"] == 2
        assert error["message"].startswith(message)
        assert error["details"]["max_children"] == 10000
        assert error["hint"].startswith("Shrink the interval: 10000 windows of 3 day(s)")
        assert "sealed child" not in result.stderr
    else:
        assert result.stdout == ""
        assert "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT: " + message in result.stderr
        assert "limits.max_children" in result.stderr and "Traceback" not in result.stderr


def test_a_profile_budget_refuses_what_the_default_admits(tmp_path: Path, registry: Path) -> None:
    profile = registry / "profiles" / "mock.dataset-jobs@1.yaml"
    text = profile.read_text("utf-8")
    profile.write_text(text.replace("  preferred_window_days:",
                                    "  max_children: 10\n  preferred_window_days:"), "utf-8")
    result = CliRunner().invoke(seal, [str(registry / "workloads" / "measurements_async.yaml"),
                                       "--registry", str(registry), *INTERVAL, "--artifacts",
                                       str(tmp_path / "artifacts"), "--format", "json"])
    assert result.exit_code == 2, result.stderr
    error = published_document(result.stdout)
    assert error["code"] == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT"
    assert (error["details"]["children"], error["details"]["max_children"]) == (11, 10)
    assert not (tmp_path / "artifacts" / "payloads").exists()


@pytest.mark.parametrize("preferred", [1, 2, 3, 4])
def test_windows_honour_the_workload_preference(tmp_path: Path, registry: Path,
                                                preferred: int) -> None:
    workload = registry / "workloads" / "measurements_async.yaml"
    text = workload.read_text("utf-8")
    workload.write_text(text.replace("preferred_window_days: 3",
                                     f"preferred_window_days: {preferred}"), "utf-8")
    result = CliRunner().invoke(seal, [str(workload), "--registry", str(registry), *INTERVAL,
                                       "--artifacts", str(tmp_path / "artifacts"),
                                       "--format", "json"])
    assert result.exit_code == 0, result.stderr
    lengths = [(dt.date.fromisoformat(child["scope"]["to"])
                - dt.date.fromisoformat(child["scope"]["from"])).days
               for child in published_document(result.stdout)["children"]]
    # August's daily volume is far below the profile's limits: only the preference bounds them.
    assert lengths == [preferred] * (31 // preferred) + ([31 % preferred] if 31 % preferred else [])
