"""Shared fixtures (a writable copy of the example registry) and the whole-run sentinel search:
no test secret in any test's output or in the state the run leaves (``support.sentinel_sweep``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from support.common import EXAMPLES, ROOT
from support.sentinel_sweep import SWEEP, check_report, scan_tree


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """A private copy of examples/ that a test may edit."""
    target = tmp_path / "registry"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


# -- the whole-run sentinel search (support.sentinel_sweep) ------------------------------------
# Under pytest-xdist (``-n N``) the controller searches every test report (it receives each
# worker's, with the captured output) and the run's temporary directory, which holds the workers'
# own; a worker searches only what lives and dies in it (its PostgreSQL clusters) and hands that
# over as it finishes (``pytest_testnodedown``). Run alone, the one process does all of it.

def _xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


_ROLE: dict[str, bool] = {"worker": False}


def pytest_configure(config: pytest.Config) -> None:
    _ROLE["worker"] = _xdist_worker(config)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not _ROLE["worker"]:
        check_report(report.nodeid, list(report.sections), report.longreprtext)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """A pytest-xdist worker finished (or crashed): add what it searched to the run's sweep."""
    SWEEP.merge(str(node.gateway.id), getattr(node, "workeroutput", {}).get("sentinel_sweep"))


@pytest.hookimpl(trylast=True)  # after the session's fixtures (PostgreSQL clusters) are gone
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _xdist_worker(session.config):
        workeroutput: dict[str, object] = session.config.workeroutput  # type: ignore[attr-defined]
        workeroutput["sentinel_sweep"] = SWEEP.handover()
        return
    scan_tree(ROOT / "test_artifacts", "test_artifacts")
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is not None:
        scan_tree(factory.getbasetemp(), "tmp")
    (ROOT / "test_artifacts").mkdir(exist_ok=True)
    (ROOT / "test_artifacts" / "sentinel_sweep.json").write_text(json.dumps({
        "test_reports": SWEEP.reports, "files": SWEEP.files, "bytes": SWEEP.bytes,
        "hits": SWEEP.hits}, indent=1) + "\n", encoding="utf-8")
    if SWEEP.hits:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(
        f"sentinel search: {SWEEP.reports} test reports, {SWEEP.files} files "
        f"({SWEEP.bytes / 1e6:.0f} MB) of journals, artifacts, logs and PostgreSQL data: "
        f"{len(SWEEP.hits)} secret(s) found")
    for hit in SWEEP.hits[:50]:
        terminalreporter.write_line(f"  LEAK {hit}", red=True)
