"""A file system the command cannot write or read is a catalog code naming the path, exit 3.

Tests run as root in CI, where a chmod'ed directory is still writable: every unwritable location
here is a path below a regular file, which no user can create.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dpone.cli.main import cli
from dpone.contracts import DponeError, content_digest
from dpone.plans import write_plan
from support.cli_documents import published_document
from support.common import EXAMPLES, assert_no_traceback, run_dpone

WORKLOAD = str(EXAMPLES / "workloads" / "measurements_sync.yaml")
BOUNDARY = ["--registry", str(EXAMPLES), "--interval-start", "2026-08-01",
            "--interval-end", "2026-08-03"]


@pytest.fixture
def below_a_file(tmp_path: Path) -> Path:
    """A directory path that cannot exist: its parent is a regular file."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n", encoding="utf-8")
    return blocker / "sub"


def _json_failure(result: Result, exit_code: int) -> dict[str, Any]:
    assert result.exit_code == exit_code, (result.exit_code, result.stdout, result.stderr)
    assert_no_traceback(result)
    document: dict[str, Any] = published_document(result.stdout)
    assert document["schema"] == "dpone.error.v1"
    assert document["exit_code"] == exit_code
    return document


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "--format", "json"])


def test_plan_out_below_a_file_is_output_unwritable(below_a_file: Path) -> None:
    document = _json_failure(_invoke("plan", WORKLOAD, "--registry", str(EXAMPLES),
                                     "--out", str(below_a_file)), 3)
    assert document["code"] == "output.unwritable"
    assert document["details"]["plan_store"] == str(below_a_file)
    assert document["details"]["path"].startswith(str(below_a_file))
    assert str(below_a_file) in document["message"]
    assert "--out" in document["hint"]


def test_plan_text_names_the_path_and_the_hint(below_a_file: Path) -> None:
    result = CliRunner().invoke(cli, ["plan", WORKLOAD, "--registry", str(EXAMPLES),
                                      "--out", str(below_a_file)])
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "output.unwritable" in result.stderr and str(below_a_file) in result.stderr
    assert "hint: " in result.stderr


def test_deliver_plans_below_a_file_is_output_unwritable(below_a_file: Path,
                                                          tmp_path: Path) -> None:
    document = _json_failure(_invoke("deliver", WORKLOAD, *BOUNDARY, "--plans", str(below_a_file),
                                     "--artifacts", str(tmp_path / "artifacts"),
                                     "--journal", str(tmp_path / "journal.sqlite3")), 3)
    assert document["code"] == "output.unwritable"
    assert document["details"]["plan_store"] == str(below_a_file)
    assert not (tmp_path / "journal.sqlite3").exists()  # refused before anything was admitted


@pytest.mark.parametrize("command", ["seal", "deliver"])
def test_artifacts_below_a_file_is_artifacts_unavailable_with_the_path(
        command: str, below_a_file: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    args = [command, WORKLOAD, *BOUNDARY, "--artifacts", str(below_a_file),
            "--plans", str(tmp_path / "plans")]
    if command == "deliver":
        # The credential resolves before anything is frozen: give it, so the store is reached.
        monkeypatch.setenv("DPONE_CONN_MOCK_MEASUREMENTS_TOKEN", "tok-unit-filesystem")
        args += ["--journal", str(tmp_path / "journal.sqlite3")]
    document = _json_failure(_invoke(*args), 3)
    assert document["code"] == "artifacts.unavailable"
    assert document["details"]["path"].startswith(str(below_a_file))
    assert str(below_a_file) in document["message"]


def test_workload_below_a_file_is_not_found(below_a_file: Path) -> None:
    document = _json_failure(_invoke("check", str(below_a_file / "w.yaml"),
                                     "--registry", str(EXAMPLES)), 2)
    assert document["code"] == "input.not_found"
    assert document["location"]["file"] == str(below_a_file / "w.yaml")


def test_an_untranslated_os_error_is_rendered_with_its_path(below_a_file: Path) -> None:
    """The last line of defence: an OSError naming a file that reaches the top of the command
    line is ``filesystem.unavailable``, exit 3, not a traceback."""
    output = below_a_file / "state-machine.md"
    result = CliRunner().invoke(cli, ["docs", "generate-state-machine-reference",
                                      "--output", str(output)])
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "filesystem.unavailable" in result.stderr
    assert str(below_a_file) in result.stderr


def test_plan_store_translates_os_errors(below_a_file: Path) -> None:
    canonical = b"{}"
    with pytest.raises(DponeError) as caught:
        write_plan(below_a_file, content_digest(canonical), canonical)
    assert caught.value.code == "output.unwritable"
    assert caught.value.exit_code == 3
    assert caught.value.details["plan_store"] == str(below_a_file)


def test_real_process_exits_three_without_traceback(below_a_file: Path, tmp_path: Path) -> None:
    for fmt in ("json", "text"):
        proc = run_dpone("plan", WORKLOAD, "--registry", str(EXAMPLES), "--out", str(below_a_file),
                         "--format", fmt, cwd=tmp_path)
        assert proc.returncode == 3, (proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stdout + proc.stderr
        if fmt == "json":
            assert published_document(proc.stdout)["code"] == "output.unwritable"
        else:
            assert proc.stdout == ""
            assert "output.unwritable" in proc.stderr
