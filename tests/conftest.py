"""Shared fixtures (a writable copy of the example registry) and the whole-run sentinel search:
no test secret in any test's output, in the state the run leaves, or in the telemetry every test
process produced: its log events and its metrics (``support.sentinel_sweep``)."""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from dpone.observability.logs import JsonFormatter
from dpone.observability.metrics import REGISTRY
from support.common import EXAMPLES, ROOT
from support.sentinel_sweep import SWEEP, check_report, scan_tree


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """A private copy of examples/ that a test may edit."""
    target = tmp_path / "registry"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


# -- the whole-run sentinel search (support.sentinel_sweep) ------------------------------------
# Every test process keeps every ``dpone`` log event (INFO and above, as JSON lines) and, at its
# end, its metrics exposition in files under the run's temporary directory, which the search
# reads like every other file there.

@pytest.fixture(scope="session", autouse=True)
def _telemetry_kept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    directory = tmp_path_factory.getbasetemp() / f"telemetry-{os.getpid()}"
    directory.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(directory / "dpone-events.jsonl", encoding="utf-8")
    handler.setFormatter(JsonFormatter())
    logging.getLogger("dpone").addHandler(handler)
    events = logging.getLogger("dpone.delivery")  # a run's transitions and attempts
    events.setLevel(logging.INFO)
    try:
        yield
    finally:
        logging.getLogger("dpone").removeHandler(handler)
        events.setLevel(logging.NOTSET)
        handler.close()
        (directory / "metrics.prom").write_bytes(generate_latest(REGISTRY))

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
