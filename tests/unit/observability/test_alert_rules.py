"""The Prometheus rules and the Grafana dashboard in deploy/ against the metrics catalogue and the
CLI, without running Prometheus (tests/integration/observability/test_prometheus_rules.py runs
promtool and a real server on the same files).

* every metric an expression names is in the catalogue (``dpone/contracts/metrics.py``; a
  histogram's ``_bucket``/``_sum``/``_count`` series count as the histogram), or is a recording
  rule of ``dpone-recording.rules.yml``; every recording rule is used;
* every label an expression groups by or matches on is a catalogue label of the metrics it reads
  (plus ``environment``, which process metrics get from the Pushgateway grouping key or the
  scrape target, and ``le`` of a histogram's buckets), and a matched value of a closed label is
  one of its values;
* every alert has a severity (``page`` or ``ticket``), a summary and a description naming the
  labels it keeps, a runbook that exists, ``dpone`` commands that exist with the options they
  are given, and a promtool unit test in deploy/prometheus/tests/ both firing and not firing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from ruamel.yaml import YAML

from dpone.cli.main import cli
from dpone.contracts.metrics import BY_NAME, FORBIDDEN_LABELS, Metric
from support.common import ROOT

DEPLOY = ROOT / "deploy"
RULES = DEPLOY / "prometheus" / "rules"
RECORDING = RULES / "dpone-recording.rules.yml"
ALERTING = RULES / "dpone-alerts.rules.yml"
UNIT_TESTS = DEPLOY / "prometheus" / "tests"
DASHBOARD = DEPLOY / "grafana" / "dpone-delivery.json"

ATTACHED_LABELS = frozenset({"environment"})
"""Labels a series gets where it is collected, not from the catalogue's label list: a process
metric's environment (Pushgateway grouping key or scrape target label)."""
SEVERITIES = frozenset({"page", "ticket"})
HISTOGRAM_SERIES = ("_bucket", "_sum", "_count")

_MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"')
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_PROMQL_WORDS = frozenset({
    "sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile",
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
    "unless", "offset", "rate", "irate", "increase", "delta", "histogram_quantile", "absent",
    "clamp_min", "clamp_max", "max_over_time", "min_over_time", "avg_over_time", "vector",
    "time", "timestamp", "s", "m", "h", "d"})  # unit letters of an `offset 5m`
_LABEL_VALUES = re.compile(r"^label_values\((?:(.*),\s*)?([A-Za-z_][A-Za-z0-9_]*)\)$")


def _load_yaml(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _rules(path: Path) -> list[dict[str, Any]]:
    return [rule for group in _load_yaml(path)["groups"] for rule in group["rules"]]


RECORDS = {rule["record"]: rule["expr"] for rule in _rules(RECORDING)}
ALERTS = {rule["alert"]: rule for rule in _rules(ALERTING)}


# --- PromQL: the metrics, label names and matched values of an expression ---------------------

@dataclass(frozen=True)
class Use:
    metrics: frozenset[str]
    """Catalogue metric names, directly or through the recording rules named."""
    records: frozenset[str]
    labels: frozenset[str]
    """Label names grouped by or matched on."""
    matches: tuple[tuple[str, str], ...]
    """(label, value) of every matcher (a dashboard variable's value, ``$name``, is not
    checked)."""
    buckets: bool


def _catalogue_name(name: str) -> str | None:
    if name in BY_NAME:
        return name
    for suffix in HISTOGRAM_SERIES:
        base = name.removesuffix(suffix)
        if base != name and base in BY_NAME and BY_NAME[base].type == "histogram":
            return base
    return None


def uses(expr: str) -> Use:
    """What ``expr`` reads; fails on a name that is neither a metric, a recording rule nor
    PromQL."""
    matches = tuple((name, value) for name, _op, value in _MATCHER.findall(expr))
    labels = {name for name, _value in matches} - {"__name__"}
    bare = re.sub(r"\{[^}]*\}", " ", expr)
    bare = re.sub(r"\[[^\]]*\]", " ", bare)
    for grouped in _GROUPING.findall(bare):
        labels.update(name.strip() for name in grouped.split(",") if name.strip())
    bare = _GROUPING.sub(lambda found: found.group(0).split("(")[0], bare)
    bare = re.sub(r'"[^"]*"', " ", bare)
    metrics: set[str] = set()
    records: set[str] = set()
    buckets = False
    bare = re.sub(r"(?<![\w:])\d+(?:\.\d+)?(?:e[+-]?\d+)?", " ", bare)
    for word in _IDENTIFIER.findall(bare):
        if word in _PROMQL_WORDS:
            continue
        if ":" in word:
            assert word in RECORDS, f"{word} is not a recording rule of {RECORDING.name}: {expr}"
            records.add(word)
            continue
        name = _catalogue_name(word)
        assert name is not None, f"{word} is not in the metrics catalogue: {expr}"
        metrics.add(name)
        buckets = buckets or word.endswith("_bucket")
    for record in list(records):
        inner = uses(RECORDS[record])
        metrics |= inner.metrics
        records |= inner.records
        buckets = buckets or inner.buckets
    return Use(frozenset(metrics), frozenset(records), frozenset(labels), matches, buckets)


def check_labels(expr: str) -> Use:
    """``expr``'s labels are its metrics' catalogue labels (and matched values admitted)."""
    use = uses(expr)
    catalogued: dict[str, Metric] = {}
    for name in use.metrics:
        for label in BY_NAME[name].labels:
            catalogued.setdefault(label.name, BY_NAME[name])
    allowed = set(catalogued) | ATTACHED_LABELS | ({"le"} if use.buckets else set())
    assert use.labels <= allowed, f"labels {sorted(use.labels - allowed)} of {expr!r} are not " \
                                  f"labels of {sorted(use.metrics)} in the catalogue"
    assert not use.labels & FORBIDDEN_LABELS, expr
    for name, value in use.matches:
        if "$" in value or name not in catalogued:
            continue
        label = next(lab for lab in catalogued[name].labels if lab.name == name)
        alternatives = value.split("|") if re.fullmatch(r"[\w.|-]*", value) else []
        for alternative in alternatives:
            assert label.admits(alternative), f"{name}={alternative!r} is not a value of the " \
                                              f"catalogue label {name}: {expr}"
    return use


def dashboard_expressions() -> Iterator[str]:
    """Every PromQL expression of the dashboard: panel targets and variable queries (a
    ``label_values(expr, label)`` query as ``sum by (label) (expr)``)."""
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield target["expr"]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] != "query":
            continue
        query = variable["query"]["query"]
        found = _LABEL_VALUES.match(query)
        assert found is not None and found.group(1), f"variable {variable['name']}: {query}"
        yield f"sum by ({found.group(2)}) ({found.group(1)})"


# --- the catalogue -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(RECORDS))
def test_recording_rule_reads_catalogue_metrics_and_labels(name: str) -> None:
    use = check_labels(RECORDS[name])
    assert use.metrics, name


@pytest.mark.parametrize("name", sorted(ALERTS))
def test_alert_reads_catalogue_metrics_and_labels(name: str) -> None:
    use = check_labels(ALERTS[name]["expr"])
    assert use.metrics, name


def test_dashboard_reads_catalogue_metrics_and_labels() -> None:
    read = set()
    for expr in dashboard_expressions():
        read |= check_labels(expr).metrics
    unread = {name for name, metric in BY_NAME.items()} - read
    assert not unread, f"metrics of the catalogue on no dashboard panel: {sorted(unread)}"


def test_every_recording_rule_is_used() -> None:
    used: set[str] = set()
    for expr in [*(rule["expr"] for rule in ALERTS.values()), *dashboard_expressions(),
                 *RECORDS.values()]:
        used |= uses(expr).records
    assert used == set(RECORDS), f"unused recording rules: {sorted(set(RECORDS) - used)}"


def test_the_checker_refuses_what_the_catalogue_does_not_have() -> None:
    with pytest.raises(AssertionError, match="not in the metrics catalogue"):
        uses("rate(dpone_requests_sent_total[5m])")
    with pytest.raises(AssertionError, match="not labels of"):
        check_labels('sum by (operation_id) (dpone_journal_held_children)')
    with pytest.raises(AssertionError, match="not labels of"):
        check_labels('dpone_journal_up{profile="x"}')
    with pytest.raises(AssertionError, match="not a value"):
        check_labels('rate(dpone_requests_total{status_class="5XX"}[5m])')
    with pytest.raises(AssertionError, match="not a recording rule"):
        uses("environment_profile:dpone_requests:rate1h > 0")
    assert uses("histogram_quantile(0.95, sum by (le) (rate("
                "dpone_request_duration_seconds_bucket[5m])))").buckets


# --- the alerts --------------------------------------------------------------------------------

def _level(record: str) -> set[str]:
    """The labels a recording rule keeps, by its name's level (``level:metric:operations``)."""
    return set(record.split(":", maxsplit=1)[0].split("_"))


def _kept_labels(expr: str) -> set[str]:
    """The labels an alert keeps: none for ``absent``, its outermost grouping, a recording
    rule's level, else its metric's catalogue labels."""
    if expr.strip().startswith("absent("):
        return set()
    grouped = _GROUPING.findall(expr)
    if grouped:
        return {name.strip() for name in grouped[0].split(",")}
    use = uses(expr)
    if use.records:
        return set.intersection(*(_level(record) for record in use.records))
    return {label for name in use.metrics for label in BY_NAME[name].label_names}


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_recording_rule_name_says_the_labels_it_keeps(name: str) -> None:
    grouped = _GROUPING.findall(RECORDS[name])
    kept = ({label.strip() for label in grouped[0].split(",")} if grouped
            else set.intersection(*(_level(record) for record in uses(RECORDS[name]).records)))
    assert _level(name) == kept, f"{name} keeps {sorted(kept)}"


@pytest.mark.parametrize("name", sorted(ALERTS))
def test_alert_says_what_and_where_and_what_next(name: str) -> None:
    rule = ALERTS[name]
    assert rule["labels"]["severity"] in SEVERITIES
    annotations = rule["annotations"]
    assert set(annotations) == {"summary", "description", "runbook"}
    assert (ROOT / annotations["runbook"]).is_file(), annotations["runbook"]
    text = annotations["summary"] + " " + annotations["description"]
    for label in _kept_labels(rule["expr"]):
        assert f"{{{{ $labels.{label} }}}}" in text, f"{name} does not name its {label}"
    commands = re.findall(r"`(dpone [^`]*)`", annotations["description"])
    assert commands, f"{name} names no dpone command to run next"
    for command in commands:
        check_command(command)


def check_command(command: str) -> None:
    """``command`` is a dpone command and every ``--option`` it shows is one of its options."""
    words = command.split()[1:]
    current: click.Command = cli
    context = click.Context(cli)
    while isinstance(current, click.Group) and words and not words[0].startswith("-"):
        found = current.get_command(context, words.pop(0))
        assert found is not None, f"not a dpone command: {command}"
        current = found
    assert not isinstance(current, click.Group), f"a group, not a command: {command}"
    options = {opt for param in current.params for opt in param.opts}
    shown = {word for word in words if word.startswith("--")}
    assert shown <= options, f"{command}: no option {sorted(shown - options)}"


def _unit_tests() -> dict[str, set[bool]]:
    """Alert name -> the kinds of its promtool cases: True firing, False not firing."""
    cases: dict[str, set[bool]] = {}
    for path in sorted(UNIT_TESTS.glob("*.yml")):
        document = _load_yaml(path)
        assert {Path(f).name for f in document["rule_files"]} == {RECORDING.name, ALERTING.name}
        for test in document["tests"]:
            for case in test.get("alert_rule_test", []):
                cases.setdefault(case["alertname"], set()).add(bool(case.get("exp_alerts")))
    return cases


def test_every_alert_has_firing_and_quiet_unit_tests() -> None:
    cases = _unit_tests()
    assert set(cases) <= set(ALERTS), f"tests of unknown alerts: {sorted(set(cases) - set(ALERTS))}"
    for name in ALERTS:
        assert cases.get(name) == {True, False}, f"{name}: promtool cases {cases.get(name)}"


# --- the dashboard -----------------------------------------------------------------------------

def test_dashboard_is_a_prometheus_dashboard_with_environment_and_profile_variables() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert dashboard["schemaVersion"] >= 39 and dashboard["uid"] == "dpone-delivery"
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for name in ("environment", "profile"):
        assert variables[name]["query"]["query"].startswith("label_values(")
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    cells: set[tuple[int, int]] = set()
    for panel in dashboard["panels"]:
        box = panel["gridPos"]
        area = {(x, y) for x in range(box["x"], box["x"] + box["w"])
                for y in range(box["y"], box["y"] + box["h"])}
        assert box["x"] + box["w"] <= 24 and not area & cells, f"panel {panel['title']} overlaps"
        cells |= area
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
            assert panel["targets"], panel["title"]
