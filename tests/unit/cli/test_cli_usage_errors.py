"""Click usage errors answer in the caller's format: one dpone.error.v1 with --format json, click's
usage text otherwise; always exit 2 and never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from dpone.cli._output import wants_json
from dpone.cli.main import cli
from support.cli_documents import published_document
from support.common import EXAMPLES, assert_no_traceback, run_dpone

WORKLOAD = str(EXAMPLES / "workloads" / "measurements_sync.yaml")
REGISTRY = ["--registry", str(EXAMPLES)]
INTERVAL = ["--interval-start", "2026-08-01", "--interval-end", "2026-08-03"]

CASES = {
    "missing-registry": (["check", WORKLOAD], "Missing option '--registry'"),
    "missing-workload": (["check", *REGISTRY], "Missing argument 'WORKLOAD'"),
    "unknown-option": (["check", WORKLOAD, *REGISTRY, "--bogus"], "--bogus"),
    "unknown-group-option": (["--bogus", "check"], "--bogus"),
    "unknown-command": (["chekc", WORKLOAD], "chekc"),
    "impossible-date": (["seal", WORKLOAD, *REGISTRY, "--interval-start", "2026-02-30",
                         "--interval-end", "2026-03-02"], "'2026-02-30' is not a valid date"),
    "malformed-date": (["deliver", WORKLOAD, *REGISTRY, "--interval-start", "2026-08-01",
                        "--interval-end", "01/09/2026"],
                       "'01/09/2026' is not a date in the form YYYY-MM-DD"),
    "directory-as-workload": (["check", str(EXAMPLES / "workloads"), *REGISTRY], "is a directory"),
    "bad-choice": (["check", WORKLOAD, *REGISTRY, "--format", "yaml"], "'yaml' is not one of"),
    "nested-group": (["delivery", "inspect"], "Missing option '--operation-id'"),
}


def _invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


@pytest.mark.parametrize("spelling", [["--format", "json"], ["--format=json"]])
@pytest.mark.parametrize("case", sorted(set(CASES) - {"bad-choice"}))
def test_json_usage_error_is_one_error_document(case: str, spelling: list[str]) -> None:
    args, needle = CASES[case]
    result = _invoke([*args, *spelling])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert_no_traceback(result)
    document = published_document(result.stdout)  # exactly one JSON document, nothing else on stdout
    assert document["schema"] == "dpone.error.v1"
    assert document["code"] == "input.invalid_argument"
    assert document["exit_code"] == 2
    assert needle in document["message"], document["message"]
    assert "--help" in document["hint"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_text_usage_error_keeps_clicks_usage_and_exits_two(case: str) -> None:
    args, _needle = CASES[case]
    result = _invoke(args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert_no_traceback(result)
    assert result.stdout == ""
    assert "Usage: " in result.stderr and "Error: " in result.stderr, result.stderr


def test_an_impossible_date_says_not_a_valid_date() -> None:
    args, _needle = CASES["impossible-date"]
    document = published_document(_invoke([*args, "--format", "json"]).stdout)
    assert document["message"] == ("Invalid value for '--interval-start': '2026-02-30' is not a "
                                   "valid date: day is out of range for month")
    assert document["details"]["parameter"] == "interval_start"
    assert "does not match the format" not in document["message"]


def test_a_valid_date_is_accepted(tmp_path: Path) -> None:
    result = _invoke(["seal", WORKLOAD, *REGISTRY, "--interval-start", "2028-02-29",
                      "--interval-end", "2028-03-01", "--artifacts", str(tmp_path / "a"),
                      "--format", "json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert published_document(result.stdout)["boundary"] == {"from": "2028-02-29", "to": "2028-03-01"}


@pytest.mark.parametrize(("argv", "expected"), [
    (["check", "w.yaml", "--format", "json"], True),
    (["check", "--format=json", "w.yaml"], True),
    (["check", "w.yaml", "--format", "text"], False),
    (["check", "w.yaml", "--format"], False),
    (["check", "--", "--format", "json"], False),
    (["check", "json"], False),
])
def test_wants_json(argv: list[str], expected: bool) -> None:
    assert wants_json(argv) is expected


def test_real_process_usage_error_json_and_text(tmp_path: Path) -> None:
    for fmt in ("json", "text"):
        proc = run_dpone("check", WORKLOAD, "--format", fmt, cwd=tmp_path)
        assert proc.returncode == 2, (proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stdout + proc.stderr
        if fmt == "json":
            assert published_document(proc.stdout)["code"] == "input.invalid_argument"
        else:
            assert proc.stdout == ""
            assert "Missing option '--registry'" in proc.stderr
