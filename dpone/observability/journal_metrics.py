"""The journal-derived gauges of `dpone metrics serve`: a Prometheus collector that reads one
snapshot from the journal (:class:`~dpone.contracts.ports.JournalMetricsView`) on every collect.

Every family is a ``journal`` entry of the catalogue (:mod:`dpone.contracts.metrics`): its name,
type, help text and label names come from there, and every label value is one the catalogue's
label admits. The journal is the state shared by every pod, so any replica of the exporter
answers the same: this is the reliable view across pods. Series are complete, not sparse: each
profile with a delivery in the environment has every state of every axis, every hold reason and
every per-profile gauge (0 when none), so an alert sees a 0, never an absent series; the receipt
TTL is the one exception: it is left out for a profile whose certified TTL cannot be resolved.

When the journal cannot be read, a collect yields ``dpone_journal_up 0`` and nothing else (no
stale number stands for a journal nobody read); a collect never raises. The change between
readable and unreadable is logged once each way, and handed to ``on_change`` (the error's
catalog code and message, which never hold a secret).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from dpone.contracts.journal_metrics import (
    AXIS_STATES,
    JournalMetricsSnapshot,
    ProfileMetrics,
)
from dpone.contracts.metrics import (
    BY_NAME,
    ENVIRONMENT,
    HOLD_REASONS,
    METRICS,
    RECOVERY_ACTIONS,
)
from dpone.contracts.metrics import Metric as CatalogueMetric
from dpone.contracts.ports import JournalMetricsView

LOG: Final = logging.getLogger("dpone.metrics.journal")

OnChange = Callable[[bool, Exception | None], None]
"""Told when the journal becomes readable (True, None) or unreadable (False, the error); the
first collect always tells."""
ReceiptTtl = Callable[[str], int | None]
"""A profile ref (``id@version``) -> its certified ``timeouts.receipt_ttl_s``, or None when it
cannot be resolved (that profile's TTL series is left out)."""

JOURNAL_METRICS: Final = tuple(metric for metric in METRICS if metric.source == "journal")

_PROFILE_GAUGES: Final = (
    ("dpone_journal_unknown_effect_oldest_age_seconds", "unknown_effect_oldest_age_s"),
    ("dpone_journal_receipt_oldest_age_seconds", "receipt_oldest_age_s"),
    ("dpone_journal_remote_jobs_active", "remote_jobs_active"),
    ("dpone_journal_remote_jobs_capacity", "remote_jobs_capacity"),
    ("dpone_journal_remote_job_domains_full", "remote_job_domains_full"),
    ("dpone_journal_checkpoint_lag_children", "checkpoint_lag_children"),
    ("dpone_journal_checkpoint_lag_oldest_seconds", "checkpoint_lag_oldest_s"),
    ("dpone_journal_source_lag_seconds", "source_lag_s"),
    ("dpone_journal_retention_backlog_parents", "retention_backlog_parents"),
)
"""Per-profile gauges (labels environment, profile) and the snapshot field each reads."""


class _Families:
    """The families of one collect, in catalogue order; each sample's label values checked
    against the catalogue's labels (a value a label does not admit is a bug, never exposed)."""

    def __init__(self) -> None:
        self._families: dict[str, GaugeMetricFamily | CounterMetricFamily] = {}
        for metric in JOURNAL_METRICS:
            if metric.type == "counter":
                self._families[metric.name] = CounterMetricFamily(
                    metric.name.removesuffix("_total"), metric.help, labels=metric.label_names)
            else:
                self._families[metric.name] = GaugeMetricFamily(metric.name, metric.help,
                                                                labels=metric.label_names)

    def add(self, name: str, labels: Sequence[str], value: float) -> None:
        metric: CatalogueMetric = BY_NAME[name]
        for label, label_value in zip(metric.labels, labels, strict=True):
            if not label.admits(label_value):
                raise ValueError(f"{name}: label {label.name} does not admit {label_value!r}")
        self._families[name].add_metric(list(labels), float(value))

    def exposed(self) -> list[Metric]:
        """The families that hold a sample."""
        return [family for family in self._families.values() if family.samples]


def _profile(add: Callable[[str, Sequence[str], float], None], environment: str,
             profile: ProfileMetrics, receipt_ttl: ReceiptTtl | None) -> None:
    name = profile.profile
    for axis, states in AXIS_STATES.items():
        for state in states:
            add("dpone_journal_children", (environment, name, axis, state),
                profile.on_axis(axis, state))
    for metric, field in _PROFILE_GAUGES:
        add(metric, (environment, name), getattr(profile, field))
    for reason in HOLD_REASONS:
        add("dpone_journal_held_children", (environment, name, reason), profile.held(reason))
    ttl = _ttl(receipt_ttl, profile.ttl_profile_ref)
    if ttl is not None:
        add("dpone_journal_receipt_ttl_seconds", (environment, name), ttl)


def _ttl(receipt_ttl: ReceiptTtl | None, profile_ref: str | None) -> int | None:
    if receipt_ttl is None or profile_ref is None:
        return None
    try:
        return receipt_ttl(profile_ref)
    except Exception:
        LOG.warning("the receipt TTL of %s cannot be resolved; its series is left out",
                    profile_ref, exc_info=True)
        return None


def journal_families(snapshot: JournalMetricsSnapshot,
                     receipt_ttl: ReceiptTtl | None = None) -> list[Metric]:
    """The catalogue's journal families of one snapshot (``dpone_journal_up`` 1)."""
    families = _Families()
    add, environment = families.add, snapshot.environment_id
    add("dpone_journal_up", (environment,), 1)
    for profile in snapshot.profiles:
        _profile(add, environment, profile, receipt_ttl)
    for action in RECOVERY_ACTIONS:
        add("dpone_journal_recovery_actions_total", (environment, action),
            snapshot.actions(action))
    add("dpone_journal_revocations", (environment, "profile"), snapshot.revoked_profiles)
    add("dpone_journal_revocations", (environment, "binding"), snapshot.revoked_bindings)
    add("dpone_journal_mutation_gate_blocked", (environment,), snapshot.mutation_gate_blocked)
    add("dpone_journal_epoch", (environment,), snapshot.journal_epoch)
    return families.exposed()


def journal_down(environment_id: str) -> list[Metric]:
    """What a collect yields when the journal cannot be read: ``dpone_journal_up 0`` only."""
    up = BY_NAME["dpone_journal_up"]
    family = GaugeMetricFamily(up.name, up.help, labels=up.label_names)
    family.add_metric([environment_id], 0.0)
    return [family]


class JournalMetricsCollector:
    """A ``prometheus_client`` collector: one journal snapshot per collect (see the module)."""

    def __init__(self, view: JournalMetricsView, environment_id: str, *,
                 receipt_ttl: ReceiptTtl | None = None, on_change: OnChange | None = None
                 ) -> None:
        if not ENVIRONMENT.admits(environment_id):
            raise ValueError(f"the environment id {environment_id!r} is not a configured name: "
                             "it cannot be a label")
        self._view = view
        self.environment_id = environment_id
        self._receipt_ttl = receipt_ttl
        self._on_change = on_change
        self.up: bool | None = None
        """Whether the last collect read the journal (None before the first)."""

    def describe(self) -> Iterable[Metric]:
        """The families, without samples: registering reads nothing from the journal."""
        for metric in JOURNAL_METRICS:
            kind = CounterMetricFamily if metric.type == "counter" else GaugeMetricFamily
            yield kind(metric.name.removesuffix("_total") if metric.type == "counter"
                       else metric.name, metric.help, labels=metric.label_names)

    def collect(self) -> Iterator[Metric]:
        try:
            families = journal_families(self._view.metrics_snapshot(self.environment_id),
                                        self._receipt_ttl)
        except Exception as error:
            self._changed(False, error)
            yield from journal_down(self.environment_id)
            return
        self._changed(True, None)
        yield from families

    def _changed(self, up: bool, error: Exception | None) -> None:
        if up == self.up:
            return
        if error is not None:
            code = getattr(error, "code", type(error).__name__)
            LOG.warning("the journal of environment %s cannot be read (%s: %s): "
                        "dpone_journal_up is 0 until it can", self.environment_id, code,
                        getattr(error, "message", error))
        elif self.up is not None:
            LOG.warning("the journal of environment %s is readable again", self.environment_id)
        self.up = up
        if self._on_change is not None:
            self._on_change(up, error)
