"""DponeUnknownEffectAging end to end: a real delivery whose child's remote effect is UNKNOWN, its
journal served by `dpone metrics serve` (a child process), scraped by a real Prometheus that
evaluates the real rule files of deploy/prometheus/rules/, and the alert read back through
Prometheus's /api/v1/alerts.

The receiver commits the sync example's first batch and drops the connection before answering
(the reconcile suite's ``commit_then_drop``): `dpone deliver` stops with exit 4 and the child
UNKNOWN. Its age is then a few seconds, below the rule's threshold (read from the rules file,
15 minutes), and the alert stays quiet. The test then moves the uncertainty into the past with a
plain SQL UPDATE on its own SQLite journal: the start of the child's current attempt (what
`dpone metrics serve` ages an UNKNOWN effect from) and the child's last update, both to the
threshold plus ten minutes before the journal clock. Nothing else is changed, and nothing waits
for wall-clock minutes: the test polls Prometheus up to a deadline.
"""

from __future__ import annotations

import os
import re
import select
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from ruamel.yaml import YAML

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import FULL, TOKEN, TOKEN_ENV, Dpone, bind_registry
from support.common import ROOT
from support.prometheus import (
    PrometheusFactory,
    ScrapeTarget,
    prometheus_server_fixture,  # noqa: F401  (a fixture)
    wait_for,
)
from support.reconcile import DROP_SYNC

RULES: Final = ROOT / "deploy" / "prometheus" / "rules"
RULE_FILES: Final = (RULES / "dpone-recording.rules.yml", RULES / "dpone-alerts.rules.yml")
ALERT: Final = "DponeUnknownEffectAging"
ENVIRONMENT: Final = "local-dev"
PROFILE: Final = "mock.batch-ndjson"
"""The sync example's profile id: the ``profile`` label of its journal series."""
BACKDATE: Final = """
UPDATE rest_delivery_attempt
   SET started_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', :shift)
 WHERE (operation_id, attempt_ordinal) IN (
       SELECT operation_id, attempt_ordinal FROM rest_delivery_child
        WHERE remote_effect = 'UNKNOWN');
UPDATE rest_delivery_child
   SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', :shift)
 WHERE remote_effect = 'UNKNOWN';
"""


def threshold_seconds() -> float:
    """The age above which the real rule fires (``... > N`` ending its expression)."""
    groups = YAML(typ="safe").load(RULE_FILES[1].read_text(encoding="utf-8"))["groups"]
    rule = next(r for g in groups for r in g["rules"] if r.get("alert") == ALERT)
    found = re.search(r">\s*(\d+(?:\.\d+)?)\s*$", rule["expr"].strip())
    assert found is not None and "for" not in rule, rule
    return float(found.group(1))


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReceiverThread]:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0.2)) as running:
        yield running


def unknown_child(tmp_path: Path, receiver: ReceiverThread) -> tuple[Path, str]:
    """A delivery stopped with a child UNKNOWN: (its SQLite journal, the child's id)."""
    dpone = Dpone(bind_registry(tmp_path, receiver.base_url), tmp_path / "state")
    receiver.state.faults.install([DROP_SYNC])
    run = dpone.deliver("measurements_sync", FULL, "--format", "json")
    assert run.code == 4, run.out + run.err
    blocked = run.json()["blocked"]
    assert blocked["remote_effect"] == "UNKNOWN", blocked
    return Path(dpone.journal_url), str(blocked["operation_id"])


@pytest.fixture
def metrics_serve(tmp_path: Path) -> Iterator[list[subprocess.Popen[str]]]:
    """The `dpone metrics serve` processes a test starts (their stderr in tmp_path), stopped
    (SIGTERM) after it."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def serve(journal: Path, cwd: Path, started: list[subprocess.Popen[str]]) -> str:
    """Start `dpone metrics serve` on a free port; its ``host:port`` from the line it prints."""
    log = cwd / "metrics-serve.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", "from dpone.cli.main import main; main()", "metrics", "serve",
             "--environment", ENVIRONMENT, "--journal", str(journal), "--port", "0"],
            stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
    started.append(process)
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if select.select([process.stdout], [], [], 0.5)[0]:
            found = re.search(r"http://(127\.0\.0\.1:\d+)/metrics", process.stdout.readline())
            assert found is not None, "dpone metrics serve printed no URL"
            return found.group(1)
    pytest.fail(f"dpone metrics serve did not start:\n{log.read_text(encoding='utf-8')}")


def backdate_unknown_effects(journal: Path, seconds: float) -> list[str]:
    """Move the UNKNOWN children's current attempt start and last update ``seconds`` before the
    journal clock (SQLite's ``now``); returns their ids."""
    connection = sqlite3.connect(journal, timeout=30)
    try:
        connection.executescript(BACKDATE.replace(":shift", f"'-{seconds:.0f} seconds'"))
        assert connection.total_changes >= 2, "no UNKNOWN child's attempt and row moved back"
        return [row[0] for row in connection.execute(
            "SELECT operation_id FROM rest_delivery_child WHERE remote_effect = 'UNKNOWN'")]
    finally:
        connection.close()


def test_an_unknown_effect_older_than_the_threshold_fires_the_page(
        tmp_path: Path, receiver: ReceiverThread, prometheus_server: PrometheusFactory,
        metrics_serve: list[subprocess.Popen[str]]) -> None:
    threshold = threshold_seconds()
    journal, child_id = unknown_child(tmp_path, receiver)
    address = serve(journal, tmp_path, metrics_serve)
    server = prometheus_server(targets=[ScrapeTarget("dpone-journal", address)],
                               rule_files=RULE_FILES)
    age = f'dpone_journal_unknown_effect_oldest_age_seconds{{environment="{ENVIRONMENT}",' \
          f'profile="{PROFILE}"}}'

    # Just stopped: the UNKNOWN effect is seconds old, well below the threshold; quiet.
    young = wait_for(lambda: server.query(f"{age} > 0"), what="the UNKNOWN child's age scraped",
                     context=server.tail)
    assert float(young[0]["value"][1]) < threshold
    assert [float(s["value"][1]) for s in server.query(
        f'dpone_journal_up{{environment="{ENVIRONMENT}"}}')] == [1.0]
    assert server.alerts(ALERT) == []

    assert backdate_unknown_effects(journal, threshold + 600) == [child_id]

    firing = wait_for(lambda: [a for a in server.alerts(ALERT) if a["state"] == "firing"],
                      what=f"{ALERT} firing", timeout=90, context=server.tail)
    assert [alert["labels"] for alert in firing] == [
        {"alertname": ALERT, "environment": ENVIRONMENT, "profile": PROFILE, "severity": "page"}]
    annotations = firing[0]["annotations"]
    assert float(firing[0]["value"]) > threshold
    assert f"profile {PROFILE}, environment {ENVIRONMENT}" in annotations["summary"]
    assert f"`dpone delivery reconcile --operation-id <child> --environment {ENVIRONMENT} " \
           f"--apply`" in annotations["description"]
    assert annotations["runbook"] == "docs/runbooks/unknown-effect.md"

    process = metrics_serve[0]
    process.terminate()
    assert process.wait(timeout=30) == 0
