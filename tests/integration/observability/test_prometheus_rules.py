"""The rules in deploy/prometheus/ through the real Prometheus tools (``scripts/prometheus_tools``
provides them; without them these tests fail, they are never skipped): ``promtool check rules``,
``promtool test rules`` on every unit test in deploy/prometheus/tests/, ``promtool check config``
on the example configuration, and a real server that loads and evaluates every rule.
(tests/unit/observability/test_alert_rules.py checks the same files against the catalogue.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.common import ROOT
from support.prometheus import (
    Prometheus,
    PrometheusFactory,
    find_tool,
    prometheus_server_fixture,  # noqa: F401  (a fixture)
    promtool,
    wait_for,
)

PROMETHEUS = ROOT / "deploy" / "prometheus"
RULE_FILES = (PROMETHEUS / "rules" / "dpone-recording.rules.yml",
              PROMETHEUS / "rules" / "dpone-alerts.rules.yml")
UNIT_TESTS = sorted((PROMETHEUS / "tests").glob("*.yml"))


def test_promtool_checks_the_rule_files() -> None:
    result = promtool("check", "rules", *map(str, RULE_FILES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 7 rules found" in result.stdout, result.stdout
    assert "SUCCESS: 11 rules found" in result.stdout, result.stdout


@pytest.mark.parametrize("unit_test", UNIT_TESTS, ids=[path.name for path in UNIT_TESTS])
def test_promtool_unit_tests_of_the_alerts_pass(unit_test: Path) -> None:
    result = promtool("test", "rules", str(unit_test), cwd=PROMETHEUS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout and "FAILED" not in result.stdout, result.stdout


def test_there_are_unit_tests() -> None:
    assert len(UNIT_TESTS) >= 4


def test_the_example_configuration_is_valid() -> None:
    result = promtool("check", "config", "prometheus.example.yml", cwd=PROMETHEUS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 rule files found" in result.stdout, result.stdout


def test_a_missing_tool_fails_naming_the_install_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(pytest.fail.Exception, match="scripts/prometheus_tools"):
        find_tool("prometheus-without-such-binary")


def test_a_real_prometheus_loads_and_evaluates_every_rule(
        prometheus_server: PrometheusFactory) -> None:
    server: Prometheus = prometheus_server(rule_files=RULE_FILES)

    def evaluated() -> list[tuple[str, str]] | None:
        rules = [rule for group in server.rules() for rule in group["rules"]]
        if not rules or any(rule["lastEvaluation"].startswith("0001-") for rule in rules):
            return None
        return [(rule["name"], rule["health"]) for rule in rules]

    rules = wait_for(evaluated, what="a first evaluation of every rule", context=server.tail)
    assert len(rules) == 18 and {health for _name, health in rules} == {"ok"}, rules
    # Nothing is scraped: no journal metrics at all, so the meta-alert is pending (its `for`).
    absent = wait_for(lambda: server.alerts("DponeJournalMetricsAbsent"),
                      what="DponeJournalMetricsAbsent pending", context=server.tail)
    assert [alert["state"] for alert in absent] == ["pending"]
    assert absent[0]["labels"] == {"alertname": "DponeJournalMetricsAbsent",
                                   "severity": "ticket"}
