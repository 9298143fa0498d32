"""`dpone docs check-rest-delivery-design-contract` and `generate-state-machine-reference`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from jsonschema import Draft202012Validator

from dpone.cli.main import cli
from dpone.compiler.design_contract import render_state_machine_reference
from support.common import ROOT
from support.design import run_check

REFERENCE = ROOT / "docs" / "reference" / "state-machine.md"
REPORT_SCHEMA = ROOT / "dpone" / "contracts" / "design" / "design-contract-report.v1.schema.json"


def test_text_output_has_one_pass_line_per_check() -> None:
    exit_code, text, stderr = run_check(None, "text")
    assert exit_code == 0, stderr
    lines = text.splitlines()
    assert lines[0].startswith("dpone/contracts/design/rest-bulk-delivery-design.v1.yaml (sha256:")
    check_lines = lines[1:-1]
    assert len(check_lines) == 18
    assert all(line.startswith("PASS    ") for line in check_lines)
    assert lines[-1] == "PASS: 18/18 checks passed"
    assert stderr == ""


def test_json_output_is_one_report_document() -> None:
    exit_code, report, _ = run_check(None, "json")
    assert exit_code == 0
    Draft202012Validator(json.loads(REPORT_SCHEMA.read_text("utf-8"))).validate(report)
    assert report["status"] == "PASS" and report["error"] is None
    assert report["summary"] == {"passed": 18, "failed": 0, "skipped": 0}


def test_console_script_in_a_subprocess() -> None:
    script = shutil.which("dpone", path=str(Path(sys.executable).parent))
    command = ([script] if script else
               [sys.executable, "-c", "from dpone.cli.main import main; main()"])
    out = subprocess.run([*command, "docs", "check-rest-delivery-design-contract", "--format",
                          "json"], capture_output=True, text=True, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert [c["status"] for c in report["checks"]] == ["PASS"] * 18
    assert "Traceback" not in out.stderr


def test_subprocess_refuses_invalid_utf8_with_exit_2() -> None:
    fixture = Path(__file__).parent / "fixtures" / "invalid_utf8.yaml"
    out = subprocess.run([sys.executable, "-c", "from dpone.cli.main import main; main()", "docs",
                          "check-rest-delivery-design-contract", str(fixture)],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2
    assert "yaml.invalid_utf8" in out.stderr and "Traceback" not in out.stderr


def test_reference_document_is_current() -> None:
    assert REFERENCE.read_text("utf-8") == render_state_machine_reference()
    result = CliRunner().invoke(cli, ["docs", "generate-state-machine-reference", "--check",
                                      "--output", str(REFERENCE)])
    assert result.exit_code == 0, result.output


def test_reference_check_detects_a_stale_file_and_regenerates(tmp_path: Path) -> None:
    target = tmp_path / "docs" / "state-machine.md"
    runner = CliRunner()
    args = ["docs", "generate-state-machine-reference", "--output", str(target)]
    assert runner.invoke(cli, [*args, "--check"]).exit_code == 1
    assert runner.invoke(cli, args).exit_code == 0
    assert runner.invoke(cli, [*args, "--check"]).exit_code == 0
    target.write_text(target.read_text("utf-8").replace("`planned`", "`planed`"), "utf-8")
    stale = runner.invoke(cli, [*args, "--check"])
    assert stale.exit_code == 1 and "stale" in stale.stderr


def test_reference_lists_tuples_transitions_terminals_and_a_mermaid_diagram() -> None:
    text = render_state_machine_reference()
    for heading in ("## Legal tuples", "## Terminal tuples", "## Automatic transitions",
                    "## Operator-only transitions", "## Diagram"):
        assert heading in text
    assert "```mermaid\nstateDiagram-v2\n    [*] --> planned\n" in text
    assert "    retry_wait --> submitting: retry_wait_due\n" in text
    assert "    final_succeeded_full_promoted --> [*]\n" in text
