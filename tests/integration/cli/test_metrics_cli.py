"""`dpone metrics show` and `dpone metrics serve` as an operator runs them, on both journals,
after a delivery over loopback left a child's effect UNKNOWN (a reset after commit).

`show` prints the non-zero series (text) or every series (one ``dpone.journal_metrics.v1``
document); `serve` is a real process on a free port: its /metrics, parsed by the Prometheus
client's parser, holds the same series as `show`, each a catalogue entry; Ctrl-C or SIGTERM ends
it with exit 0. The journal and the receipt TTLs come from the environment file alone
(``--environment local-dev --registry REGISTRY``); a journal that cannot be read is served as
``dpone_journal_up 0``.
"""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from dpone.compiler.profile_lookup import load_profile
from dpone.contracts.metrics import BY_NAME, METRICS
from dpone.receiver import ReceiverThread
from support.cli import Dpone, Run
from support.common import ROOT, free_port
from support.reconcile import DROP_SYNC
from support.telemetry import assert_catalogued

SYNC_PROFILE = "mock.batch-ndjson"
WEEK = ("2026-08-01", "2026-08-08")
_SERVING = re.compile(r"^serving the journal metrics of environment local-dev on "
                      r"(http://127\.0\.0\.1:\d+/metrics) \(read-only")


def _environment_names(registry: Path, journal_url: str) -> None:
    """The registry's environment file names the test's journal in its control plane."""
    path = registry / "environments" / "local-dev.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"^  journal: .*$", f'  journal: "{journal_url}"', text,
                           flags=re.M), encoding="utf-8")


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    _environment_names(registry, journal_url)
    return Dpone(registry, tmp_path / "state", journal_url)


@pytest.fixture
def unknown(dpone: Dpone, receiver: ReceiverThread) -> str:
    """A delivery whose one child's effect is UNKNOWN; its child's operation id."""
    receiver.state.faults.install([DROP_SYNC])
    run = dpone.deliver("measurements_sync", WEEK, "--format", "json")
    assert run.code == 4, run.out + run.err
    return str(run.json()["blocked"]["operation_id"])


def _show(dpone: Dpone, *extra: str) -> Run:
    return dpone("metrics", "show", "--environment", "local-dev", "--registry",
                 str(dpone.registry), *extra)


def _check_series(name: str, labels: dict[str, str]) -> None:
    assert_catalogued(name, labels, "journal")


def test_show_prints_the_unknown_effect_and_its_age(dpone: Dpone, unknown: str) -> None:
    shown = _show(dpone, "--format", "json")

    assert shown.code == 0, shown.out + shown.err
    document = shown.json()
    assert document["environment_id"] == "local-dev"
    series = {(s["name"], tuple(sorted(s["labels"].items()))): s["value"]
              for s in document["series"]}
    for s in document["series"]:
        _check_series(s["name"], s["labels"])
        assert s["type"] == BY_NAME[s["name"]].type
    assert {name for name, _ in series} == {m.name for m in METRICS if m.source == "journal"}
    here = (("environment", "local-dev"), ("profile", SYNC_PROFILE))

    def one(name: str, *labels: tuple[str, str]) -> Any:
        return series[name, tuple(sorted((*here, *labels)))]

    assert one("dpone_journal_children", ("axis", "remote_effect"), ("state", "UNKNOWN")) == 1
    assert one("dpone_journal_unknown_effect_oldest_age_seconds") > 0
    assert one("dpone_journal_receipt_ttl_seconds") == load_profile(
        dpone.registry, f"{SYNC_PROFILE}@1").timeouts.receipt_ttl_s
    assert unknown not in shown.out and "sha256:" not in shown.out

    text = _show(dpone)

    assert text.code == 0, text.out + text.err
    lines = text.out.splitlines()
    assert lines[0].startswith("journal metrics of environment local-dev at ")
    assert re.search(rf"dpone_journal_children +{SYNC_PROFILE} +remote_effect=UNKNOWN +1$",
                     text.out, re.M), text.out
    assert re.search(rf"dpone_journal_unknown_effect_oldest_age_seconds +{SYNC_PROFILE} +"
                     r"[\d.]+ \([\d.]+s\)$", text.out, re.M), text.out
    assert not re.search(r" 0$", text.out, re.M)  # zero-valued series are left out
    assert re.match(r"\d+ non-zero series; \d+ zero-valued left out", lines[-1])


def test_show_refuses_what_it_cannot_read(dpone: Dpone, tmp_path: Path) -> None:
    missing = dpone("metrics", "show", "--journal", str(tmp_path / "none.sqlite3"),
                    "--format", "json")
    assert missing.code == 2 and missing.json()["code"] == "journal.not_found"
    unlabelled = dpone("metrics", "show", "--environment", "Local Dev", "--journal",
                       dpone.journal_url, "--format", "json")
    assert unlabelled.code == 2 and unlabelled.json()["code"] == "input.invalid_argument"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """Start `dpone metrics serve` as its own process; ``serve(*options)`` -> (process, URL)."""
    started: list[subprocess.Popen[str]] = []

    def start(*options: str) -> tuple[subprocess.Popen[str], str]:
        process = subprocess.Popen(
            [sys.executable, "-c", "from dpone.cli.main import main; main()", "metrics",
             "serve", "--port", "0", *options], cwd=tmp_path, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
        started.append(process)
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        line = process.stdout.readline() if ready else ""
        match = _SERVING.match(line)
        assert match, f"{line!r}: {process.stderr.read() if process.poll() is not None else ''}"
        return process, match.group(1)

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def _stop(process: subprocess.Popen[str], number: signal.Signals) -> tuple[int, str]:
    process.send_signal(number)
    _out, err = process.communicate(timeout=30)
    return process.returncode, err


def _families(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = httpx.get(url, timeout=30)
    assert answer.status_code == 200
    found = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            _check_series(sample.name, dict(sample.labels))
            found[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return found


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serve_exposes_the_scrape_show_prints_and_stops_cleanly(
        dpone: Dpone, unknown: str, serve: Any, stop: signal.Signals) -> None:
    process, url = serve("--environment", "local-dev", "--registry", str(dpone.registry))

    scraped = _families(url)
    shown = {(s["name"], tuple(sorted(s["labels"].items()))): s["value"]
             for s in _show(dpone, "--format", "json").json()["series"]}

    assert set(scraped) == set(shown)
    clock_free = {key for key in shown if not key[0].endswith("_seconds")
                  or key[0] == "dpone_journal_receipt_ttl_seconds"}
    assert {key: scraped[key] for key in clock_free} == {key: shown[key] for key in clock_free}
    assert scraped["dpone_journal_up", (("environment", "local-dev"),)] == 1
    code, err = _stop(process, stop)
    assert code == 0, err
    assert "stopped serving the journal metrics" in err and "Traceback" not in err


def test_serve_answers_up_0_while_the_journal_cannot_be_reached(serve: Any) -> None:
    closed = f"postgresql://dpone@127.0.0.1:{free_port()}/dpone?connect_timeout=2"
    process, url = serve("--environment", "local-dev", "--journal", closed)

    assert _families(url) == {("dpone_journal_up", (("environment", "local-dev"),)): 0.0}
    code, err = _stop(process, signal.SIGINT)
    assert code == 0, err
    assert "cannot be read (journal.unavailable" in err


def test_serve_refuses_a_port_that_is_taken(dpone: Dpone, unknown: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        refused = dpone("metrics", "serve", "--environment", "local-dev", "--registry",
                        str(dpone.registry), "--port", port)
    assert refused.code == 2, refused.out + refused.err
    assert "cannot serve metrics on 127.0.0.1:" in refused.err
