"""The metrics catalogue: bounded labels only, the spec's required set, and the one source of the
process's collectors and the generated reference."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from dpone.contracts.metrics import (
    BY_NAME,
    CONFIGURED_NAME,
    FORBIDDEN_LABELS,
    METRICS,
    Label,
    Metric,
    recovery_action,
    status_class,
)
from dpone.observability.metrics import REGISTRY
from support.common import ROOT
from support.telemetry import unbounded

REQUIRED = {
    # spec "Metrics use bounded labels...": operations by every state axis, source and
    # checkpoint lag, rows/bytes, rate-limit wait, active remote jobs, receipt age,
    # unknown-effect age, artifact retention, CAS conflict, recovery action
    "operations by every state axis": "dpone_journal_children",
    "source lag": "dpone_journal_source_lag_seconds",
    "checkpoint lag": "dpone_journal_checkpoint_lag_children",
    "rows": "dpone_rows_sent_total",
    "bytes": "dpone_bytes_sent_total",
    "rate-limit wait": "dpone_rate_limit_wait_seconds_total",
    "active remote jobs": "dpone_journal_remote_jobs_active",
    "receipt age": "dpone_journal_receipt_oldest_age_seconds",
    "unknown-effect age": "dpone_journal_unknown_effect_oldest_age_seconds",
    "artifact retention": "dpone_journal_retention_backlog_parents",
    "CAS conflict": "dpone_journal_cas_conflicts_total",
    "recovery action": "dpone_journal_recovery_actions_total",
    # the in-process set
    "requests by outcome": "dpone_requests_total",
    "request latency by phase": "dpone_request_duration_seconds",
    "retries": "dpone_retries_total",
    "seal/freeze durations": "dpone_stage_duration_seconds",
    "revoked/expired identities": "dpone_journal_held_children",
    "gate state": "dpone_journal_mutation_gate_blocked",
}


@pytest.mark.parametrize("what", sorted(REQUIRED))
def test_every_required_metric_exists(what: str) -> None:
    assert REQUIRED[what] in BY_NAME


@pytest.mark.parametrize("metric", METRICS, ids=lambda metric: metric.name)
def test_every_label_is_bounded(metric: Metric) -> None:
    for label in metric.labels:
        assert label.name not in FORBIDDEN_LABELS, label.name
        if label.values is not None:
            assert label.values, f"{label.name} has an empty value set"
            assert len(label.values) == len(set(label.values))
            assert len(label.values) <= 200
        else:  # a configured name: only the profile and the environment are
            assert label.name in {"profile", "environment"}, label.name


@pytest.mark.parametrize("metric", METRICS, ids=lambda metric: metric.name)
def test_names_types_and_help_follow_the_prometheus_conventions(metric: Metric) -> None:
    name, kind = metric.name, metric.type
    assert name.startswith("dpone_")
    assert name.endswith("_total") == (kind == "counter")
    assert metric.help.strip() and len(metric.help) < 240
    if name.endswith("_seconds") or "_seconds_" in name:
        assert metric.unit == "seconds"


def test_the_process_registry_is_the_catalogue_process_metrics() -> None:
    exposed = {family.name for family in REGISTRY.collect()}
    wanted = {metric.name.removesuffix("_total") for metric in METRICS if metric.source == "process"}
    assert exposed == wanted
    for family in REGISTRY.collect():
        metric = BY_NAME.get(family.name) or BY_NAME[family.name + "_total"]
        assert family.type == metric.type
        assert family.documentation == metric.help


def test_a_configured_name_admits_names_and_refuses_ids() -> None:
    profile = Label("profile", "")
    assert profile.admits("mock_measurements_sync")
    assert not profile.admits("op_3f2a9c/1")
    assert not profile.admits("sha256:" + "0" * 64)
    assert not profile.admits("x" * 129)
    assert CONFIGURED_NAME.match("local-dev")


def test_the_bounded_label_check_fails_on_an_id_or_an_undeclared_label() -> None:
    operation = "dop_0123456789abcdef"
    read = [("dpone_requests_total", (("outcome", "response"), ("phase", "submit"),
                                      ("profile", "mock_sync"), ("status_class", "2xx"))),
            ("dpone_requests_total", (("phase", operation),)),
            ("dpone_rows_sent_total", (("profile", "mock_sync"), ("operation_id", "x"))),
            ("dpone_journal_children", (("profile", operation),)),
            ("dpone_made_up_total", ())]
    problems = unbounded(read, identifiers=[operation])
    assert problems == [
        f"dpone_requests_total: phase={operation!r} is not a bounded value",
        "dpone_rows_sent_total: label operation_id is not declared",
        f"dpone_journal_children: profile={operation!r} is not a bounded value",
        "dpone_made_up_total: not a metric of the catalogue"]


def test_status_classes_and_recovery_actions() -> None:
    assert [status_class(s) for s in (200, 202, 429, 503, None, 99)] == [
        "2xx", "2xx", "4xx", "5xx", "none", "none"]
    assert recovery_action("operator_reconcile") == "reconcile"
    assert recovery_action("capacity_repair") == "capacity_repair"
    assert recovery_action("operator_something_new") == "other"


def _generator() -> ModuleType:
    path = ROOT / "scripts" / "generate_metrics_reference.py"
    spec = importlib.util.spec_from_file_location("generate_metrics_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_metrics_reference_is_generated_from_the_catalogue() -> None:
    gen = _generator()
    assert gen.OUTPUT.read_text("utf-8") == gen.render(), (
        "docs/reference/metrics.md is stale: run "
        ".venv/bin/python scripts/generate_metrics_reference.py and review the diff")
    for metric in METRICS:
        assert f"`{metric.name}`" in gen.render()
