"""A receiver slower than the profile's read timeout: the child stops with an unknown effect
(the request may have reached it), and the cause is recorded with the attempt, not lost: the
transport phase and the bound that fired (``read timeout after 2 s``), shown by `inspect` in
text and JSON, with no header, body or exception text."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from dpone.cli.delivery import _delivery_run
from dpone.cli.delivery._delivery_run import LazyTransport
from dpone.contracts.transport import OutboundRequest, Response, TransportOutcome
from dpone.receiver import ReceiverThread
from support.cli import Dpone

WEEK = ("2026-08-01", "2026-08-08")


def _read_timeout(registry: Path, seconds: int) -> None:
    profile = registry / "profiles" / "mock.batch-ndjson@1.yaml"
    profile.write_text(re.sub(r"^  read_s: \d+$", f"  read_s: {seconds}",
                              profile.read_text(encoding="utf-8"), flags=re.M), encoding="utf-8")


def test_a_read_timeout_is_recorded_with_its_bound_and_shown_by_inspect(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread) -> None:
    _read_timeout(registry, 2)
    receiver.state.faults.install([{"match": {"method": "POST", "path_prefix": "/mock/v1/batches/"},
                                    "fault": "slow", "delay_ms": 4000}])
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)

    run = dpone.deliver("measurements_sync", WEEK, "--format", "json")

    assert run.code == 4, run.out + run.err
    document = run.json()
    assert document["blocked"]["code"] == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert document["blocked"]["evidence"]["transport_failure"] == "read_timeout"
    parent_id = document["parent_id"]
    inspected = dpone.inspect(parent_id, "--format", "json")
    text = dpone.inspect(parent_id)
    [child] = inspected.json()["children"]
    assert child["receipt"]["transport_cause"] == "read timeout after 2 s"
    assert child["receipt"]["transport_phase"] == "may_have_reached"
    assert child["likely_cause"] == {
        "http_status": None, "transport_failure": "read_timeout",
        "summary": "read timeout after 2 s: the request may have reached the receiver, so the "
                   "effect stays unknown"}
    assert "likely cause: read timeout after 2 s: the request may have reached the receiver" \
        in text.out


class _Slow:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def send(self, request: OutboundRequest) -> TransportOutcome:
        time.sleep(self.seconds)
        return Response(status=200, headers={}, body=b"{}", origin="http://127.0.0.1:1")

    def close(self) -> None:
        pass


def test_a_request_waiting_for_its_answer_prints_progress_lines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_delivery_run, "SLOW_FIRST_S", 0.05)
    monkeypatch.setattr(_delivery_run, "SLOW_EVERY_S", 0.1)
    lines: list[str] = []
    transport = LazyTransport(lambda: _Slow(0.4), read_timeout_s=30, note=lines.append)

    transport.send(OutboundRequest(method="POST", path="/mock/v1/batches/x"))
    quick = len(lines)
    LazyTransport(lambda: _Slow(0.0), note=lines.append).send(
        OutboundRequest(method="POST", path="/mock/v1/batches/x"))

    assert quick >= 2
    assert lines[0] == ("  waiting for the receiver's answer to POST /mock/v1/batches/x "
                        "(0.05 s so far; the read timeout ends it after 30 s)")
    assert len(lines) == quick  # an answer before the first threshold prints nothing
