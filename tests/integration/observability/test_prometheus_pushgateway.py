"""Process metrics the way a short-lived executor pod delivers them: pushed to a real Pushgateway
by :func:`dpone.observability.metrics.push`, scraped by a real Prometheus with honor_labels (as
deploy/prometheus/prometheus.example.yml does) and read by the real recording and alert rules.

The pushing process is a child (the collectors are process-global): it records requests through
:mod:`dpone.observability.metrics` and pushes once per line it reads, so the second push carries
the same counters grown, as one pod's runs would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from typing import Final

import pytest
from prometheus_client.parser import text_string_to_metric_families

from support.common import ROOT
from support.prometheus import (
    Prometheus,
    PrometheusFactory,
    ScrapeTarget,
    prometheus_server_fixture,  # noqa: F401  (a fixture)
    pushgateway_fixture,  # noqa: F401  (a fixture)
    wait_for,
)

PROFILE: Final = "mock.dataset-jobs"
SERIES: Final = f'environment="prod",profile="{PROFILE}"'
RULE_FILES: Final = (ROOT / "deploy" / "prometheus" / "rules" / "dpone-recording.rules.yml",
                     ROOT / "deploy" / "prometheus" / "rules" / "dpone-alerts.rules.yml")
PUSHER: Final = f"""
import sys
from dpone.observability import metrics
for line in sys.stdin:
    gateway, answered, failed, timed_out = line.split()
    for _ in range(int(answered)):
        metrics.request({PROFILE!r}, "submit", "response", 200, 0.05)
    for _ in range(int(failed)):
        metrics.request({PROFILE!r}, "submit", "response", 503, 0.2)
    for _ in range(int(timed_out)):
        metrics.request({PROFILE!r}, "poll_receipt", "read_timeout", None, 10.0)
    metrics.rate_wait({PROFILE!r}, "submit", 1.5)
    metrics.push(gateway, "dpone-executor", {{"environment": "prod", "profile": {PROFILE!r}}})
    print("pushed", flush=True)
"""


class Pusher:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process

    def push(self, gateway: str, answered: int, failed: int, timed_out: int) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{gateway} {answered} {failed} {timed_out}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line == "pushed\n", f"the pusher said {line!r}: {self.process.stderr}"


@pytest.fixture
def pusher() -> Iterator[Pusher]:
    process = subprocess.Popen([sys.executable, "-c", PUSHER], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        yield Pusher(process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)


def _value(server: Prometheus, expr: str) -> float | None:
    result = server.query(expr)
    return float(result[0]["value"][1]) if len(result) == 1 else None


def test_pushed_request_failures_reach_the_recording_rules_and_the_alert(
        pushgateway: str, prometheus_server: PrometheusFactory, pusher: Pusher) -> None:
    server = prometheus_server(
        targets=[ScrapeTarget("dpone-pushgateway", pushgateway.removeprefix("http://"),
                              honor_labels=True)],
        rule_files=RULE_FILES)
    pusher.push(pushgateway, answered=1, failed=1, timed_out=1)
    wait_for(lambda: _value(server, f'dpone_requests_total{{{SERIES},status_class="5xx"}}') == 1,
             what="the first push scraped", context=server.tail)
    # The pod's counters grow: 8 more requests, 2 of them failed (a 503 and a read timeout).
    pusher.push(pushgateway, answered=6, failed=1, timed_out=1)
    wait_for(lambda: _value(server, f'dpone_requests_total{{{SERIES},status_class="2xx"}}') == 7,
             what="the second push scraped", context=server.tail)

    sample = dict(server.query(f'dpone_requests_total{{{SERIES},outcome="read_timeout"}}')[0]
                  ["metric"])
    assert sample["job"] == "dpone-executor" and sample["phase"] == "poll_receipt"
    ratio = wait_for(lambda: _value(
        server, f"environment_profile:dpone_requests_failed:ratio_rate5m{{{SERIES}}} > 0"),
        what="the recorded failure ratio", context=server.tail)
    assert 0.1 < ratio < 0.5, ratio  # 2 of 8 (rate extrapolates each series a little)
    alerts = wait_for(lambda: server.alerts("DponeRequestFailures"),
                      what="DponeRequestFailures pending", context=server.tail)
    assert [(a["state"], a["labels"]) for a in alerts] == [
        ("pending", {"alertname": "DponeRequestFailures", "environment": "prod",
                     "profile": PROFILE, "severity": "ticket"})]
    # The dashboard's latency query reads the pushed histogram's buckets.
    p95 = wait_for(lambda: server.query(
        'histogram_quantile(0.95, sum by (phase, le) (rate('
        'dpone_request_duration_seconds_bucket{environment=~"prod"}[5m])))'),
        what="request latency quantiles", context=server.tail)
    assert {sample["metric"]["phase"] for sample in p95} == {"submit", "poll_receipt"}
    assert _value(server, f"environment_profile_kind:dpone_rate_limit_wait_seconds:rate5m"
                          f'{{{SERIES},kind="submit"}}') is not None


TWO_PROFILES: Final = """
import sys
from dpone.observability import metrics
gateway = sys.argv[1]
metrics.request("mock.batch-ndjson", "submit", "response", 200, 0.05)
metrics.request("mock.dataset-jobs", "submit", "response", 200, 0.05)
metrics.request("mock.dataset-jobs", "poll_receipt", "response", 200, 0.05)
metrics.push(gateway, "dpone-executor", {"environment": "prod", "profile": "mock.dataset-jobs"})
metrics.push(gateway, "dpone-executor", {"environment": "prod", "profile": "mock.batch-ndjson"})
"""


def test_a_process_that_recorded_two_profiles_pushes_each_under_its_own_group(
        pushgateway: str) -> None:
    """The Pushgateway refuses a whole push whose samples contradict its grouping key: each
    push carries only its own profile's series."""
    subprocess.run([sys.executable, "-c", TWO_PROFILES, pushgateway], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    with urllib.request.urlopen(f"{pushgateway}/metrics", timeout=10) as response:
        text = response.read().decode()
    requests = [sample for family in text_string_to_metric_families(text)
                if family.name == "dpone_requests" for sample in family.samples
                if sample.name == "dpone_requests_total"]
    assert sorted((s.labels["profile"], s.labels["phase"], s.value) for s in requests) == [
        ("mock.batch-ndjson", "submit", 1.0),
        ("mock.dataset-jobs", "poll_receipt", 1.0),
        ("mock.dataset-jobs", "submit", 1.0)]
