"""`--log-format json|text` (or DPONE_LOG_FORMAT) turns on one structured event per journal
transition and per attempt on stderr, never touching stdout's document; `--metrics-port` serves
the run's metrics. Bad values are usage errors with a hint."""

from __future__ import annotations

import json
import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from dpone.observability import logs
from dpone.receiver import ReceiverThread
from support.cli import ONE_ASYNC_CHILD, TOKEN, Dpone
from support.common import free_port
from support.telemetry import unbounded


@pytest.fixture(autouse=True)
def _logs_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(logs.ENVIRONMENT_VARIABLE, raising=False)
    yield
    logs.configure("off")


def _dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal_url)


def _delivery_events(stderr: str) -> list[dict[str, object]]:
    events = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [event for event in events if event["logger"] == "dpone.delivery"]


def test_json_log_events_carry_the_identifiers_and_leave_stdout_alone(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread) -> None:
    dpone = _dpone(registry, tmp_path, journal_url)
    run = dpone("--log-format", "json", "deliver",
                str(registry / "workloads" / "measurements_async.yaml"), "--registry",
                str(registry), "--interval-start", ONE_ASYNC_CHILD[0], "--interval-end",
                ONE_ASYNC_CHILD[1], "--journal", dpone.journal_url, "--artifacts",
                str(dpone.state / "artifacts"), "--plans", str(dpone.state), "--wait",
                "--format", "json")
    assert run.code == 0, run.out + run.err
    document = run.json()  # stdout is still exactly one document
    events = _delivery_events(run.err)
    assert [e["event"] for e in events][:1] == ["attempt"]  # SEALED -> SUBMITTING
    assert [e["event"] for e in events].count("attempt") == 1
    names = [e["transition"] for e in events if e["event"] == "transition"]
    assert names[0] == "submitting_async_receipt_accepted"
    for event in events:
        assert event["parent_id"] == document["parent_id"]
        assert str(event["plan_digest"]).startswith("sha256:")
        assert str(event["operation_id"]).startswith(str(document["parent_id"]))
        assert event["ordinal"] == 1 and event["level"] == "info"
    assert TOKEN not in run.err + run.out


def test_the_environment_variable_selects_text_and_off_prints_no_event(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    dpone = _dpone(registry, tmp_path, journal_url)
    monkeypatch.setenv(logs.ENVIRONMENT_VARIABLE, "text")
    run = dpone.deliver("measurements_sync", ("2026-08-01", "2026-08-08"))
    assert run.code == 0, run.out + run.err
    lines = [line for line in run.err.splitlines() if " transition " in line]
    assert lines and all("operation_id=op_v1_" in line and "plan_digest=sha256:" in line
                         for line in lines)
    monkeypatch.setenv(logs.ENVIRONMENT_VARIABLE, "off")
    quiet = dpone.deliver("measurements_sync", ("2026-08-08", "2026-08-15"))
    assert quiet.code == 0, quiet.out + quiet.err
    assert " transition " not in quiet.err and "{" not in quiet.err


@pytest.mark.parametrize("where", ["option", "environment"])
def test_an_unknown_log_format_is_a_usage_error(tmp_path: Path, where: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    dpone = Dpone(tmp_path, tmp_path)
    if where == "option":
        run = dpone("--log-format", "yaml", "plan", "--help")
        assert run.code == 2 and "yaml" in run.err
    else:
        monkeypatch.setenv(logs.ENVIRONMENT_VARIABLE, "yaml")
        run = dpone("delivery", "list", "--journal", str(tmp_path / "j.sqlite3"))
        assert run.code == 2, run.out + run.err
        assert "DPONE_LOG_FORMAT" in run.err and "json, text, off" in run.err
        assert "Traceback" not in run.err


def test_metrics_port_serves_the_run_metrics_with_bounded_labels(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread) -> None:
    dpone = _dpone(registry, tmp_path, journal_url)
    port = free_port()
    run = dpone.deliver("measurements_sync", ("2026-08-01", "2026-08-08"),
                        "--metrics-port", str(port), "--format", "json")
    assert run.code == 0, run.out + run.err
    assert f"metrics: http://127.0.0.1:{port}/metrics" in run.err
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    submits = [s for s in families["dpone_requests"].samples
               if s.name == "dpone_requests_total" and s.labels["phase"] == "submit"]
    assert sum(s.value for s in submits) >= 1
    keys = [(s.name, tuple(sorted(s.labels.items()))) for f in families.values()
            for s in f.samples if not s.name.endswith("_created")]
    assert unbounded(keys, [run.json()["parent_id"]]) == []


def test_a_busy_metrics_port_is_refused_before_anything_runs(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread) -> None:
    dpone = _dpone(registry, tmp_path, journal_url)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = dpone.deliver("measurements_sync", ("2026-08-01", "2026-08-08"),
                            "--metrics-port", str(port))
    assert run.code == 2, run.out + run.err
    assert "--metrics-port" in run.err and "Traceback" not in run.err
    assert receiver.state.ledger.snapshot()["mutations_total"] == 0
