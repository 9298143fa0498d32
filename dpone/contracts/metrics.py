"""The metrics catalogue: every metric's name, type, help text and labels, in one place.

The Prometheus collectors of a process (``dpone.observability.metrics``), the journal-derived
gauges of ``dpone metrics serve`` (``dpone.observability.journal_metrics``), the alert rules'
tests and the generated metrics reference (``docs/reference/metrics.md``) all read this table.

Every label has a bounded value set (spec "Metrics use bounded labels"): either a closed
enumeration listed here, or a *configured name* (a profile id, an environment id), bounded by
the platform's registry and checked against the name pattern. An operation id, a digest, a URL or
any other per-delivery value is never a label: those belong in logs and spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from dpone.contracts._axes import (
    AXES,
    AcknowledgementState,
    CheckpointState,
    ExecutionState,
    RemoteEffect,
    VerificationState,
)
from dpone.contracts._names import Transition
from dpone.contracts.transport import FailureKind

MetricType = Literal["counter", "gauge", "histogram"]
Source = Literal["process", "journal"]
"""``process``: measured by the process that does the work (scraped from ``--metrics-port`` or
pushed to a Pushgateway); ``journal``: read from the journal by ``dpone metrics serve``."""

CONFIGURED_NAME: Final = re.compile(r"^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*$")
"""The pattern of a configured name (a profile or environment id), at most 128 characters."""


@dataclass(frozen=True, slots=True)
class Label:
    name: str
    doc: str
    values: tuple[str, ...] | None = None
    """The closed value set; ``None`` for a configured name (:data:`CONFIGURED_NAME`)."""

    def admits(self, value: str) -> bool:
        if self.values is not None:
            return value in self.values
        return len(value) <= 128 and CONFIGURED_NAME.match(value) is not None


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    type: MetricType
    help: str
    labels: tuple[Label, ...]
    source: Source
    unit: str = ""

    @property
    def label_names(self) -> tuple[str, ...]:
        return tuple(label.name for label in self.labels)


REQUEST_PHASES: Final = ("submit", "replay", "poll_receipt", "query_by_key")
STATUS_CLASSES: Final = ("1xx", "2xx", "3xx", "4xx", "5xx", "none")
REQUEST_OUTCOMES: Final = ("response", *(kind.value for kind in FailureKind))
STAGES: Final = ("compile", "freeze", "seal", "admit", "deliver", "reconcile", "resume")
WRITER_STEPS: Final = ("enter_submitting", "orphan_marker_found")
"""The journal writer's steps that are not a contract transition id."""
RECOVERY_ACTIONS: Final = ("reconcile", "resume", "prune", "capacity_repair", "other")
RATE_KINDS: Final = ("submit", "poll")
FAMILIES: Final = ("sync_batch", "async_bulk_job")
DELIVERY_RESULTS: Final = ("completed", "incomplete", "blocked")
STATE_VALUES: Final = tuple(dict.fromkeys(
    str(value) for enum in (ExecutionState, RemoteEffect, AcknowledgementState,
                            VerificationState, CheckpointState) for value in enum))
HOLD_REASONS: Final = ("profile_revoked", "binding_revoked", "identity_expired")

PROFILE: Final = Label("profile", "The operation profile id (configured).")
ENVIRONMENT: Final = Label("environment", "The environment id (configured).")
PHASE: Final = Label("phase", "What the request was for.", REQUEST_PHASES)
STATUS_CLASS: Final = Label("status_class", "The HTTP status class; `none` without a response.",
                            STATUS_CLASSES)

_P: Final[Source] = "process"
_J: Final[Source] = "journal"

METRICS: Final[tuple[Metric, ...]] = (
    # --- measured in the process that does the work -------------------------------------------
    Metric("dpone_requests_total", "counter",
           "Requests handed to the transport, by what they were for and how they ended.",
           (PROFILE, PHASE, Label("outcome", "`response`, or the transport failure kind.",
                                  REQUEST_OUTCOMES), STATUS_CLASS), _P),
    Metric("dpone_request_duration_seconds", "histogram",
           "Time from handing a request to the transport to its answer or failure.",
           (PROFILE, PHASE), _P, "seconds"),
    Metric("dpone_rows_sent_total", "counter",
           "Rows of the submit requests handed to the transport (a resent child counts again).",
           (PROFILE,), _P),
    Metric("dpone_bytes_sent_total", "counter",
           "Wire bytes of the submit requests handed to the transport.", (PROFILE,), _P, "bytes"),
    Metric("dpone_rate_limit_wait_seconds_total", "counter",
           "Time spent waiting for a turn of the receiver account's shared rate limit.",
           (PROFILE, Label("kind", "The rate bucket.", RATE_KINDS)), _P, "seconds"),
    Metric("dpone_retries_total", "counter",
           "Failed submits, replays and receipt polls this process repeats after a delay.",
           (PROFILE, Label("action", "What is repeated.", ("submit", "replay", "poll_receipt")),
            STATUS_CLASS), _P),
    Metric("dpone_stage_duration_seconds", "histogram",
           "Duration of a compile, freeze, seal, admission, delivery run, reconcile or resume.",
           (Label("stage", "The stage.", STAGES),), _P, "seconds"),
    Metric("dpone_transitions_total", "counter",
           "Journal transitions this process made, by contract transition id.",
           (PROFILE, Label("transition", "The contract transition id (or writer step).",
                           (*(t.value for t in Transition), *WRITER_STEPS))), _P),
    Metric("dpone_deliveries_total", "counter",
           "Delivery runs that ended, by protocol family and result.",
           (PROFILE, Label("family", "The protocol family.", FAMILIES),
            Label("result", "How the run ended.", DELIVERY_RESULTS)), _P),
    Metric("dpone_journal_cas_conflicts_total", "counter",
           "Journal writes refused by a revision compare-and-set (another holder moved first).",
           (), _P),
    # --- read from the journal by `dpone metrics serve` ---------------------------------------
    Metric("dpone_journal_up", "gauge",
           "1 when the last scrape read the journal, 0 when it could not.", (ENVIRONMENT,), _J),
    Metric("dpone_journal_children", "gauge",
           "Child operations by state axis and state.",
           (ENVIRONMENT, PROFILE, Label("axis", "The state axis.", AXES),
            Label("state", "The state on that axis.", STATE_VALUES)), _J),
    Metric("dpone_journal_unknown_effect_oldest_age_seconds", "gauge",
           "Time since the submit attempt of the oldest child whose remote effect is UNKNOWN "
           "started (0 when none).",
           (ENVIRONMENT, PROFILE), _J, "seconds"),
    Metric("dpone_journal_receipt_oldest_age_seconds", "gauge",
           "Time since the oldest receipt still observed was recorded (0 when none).",
           (ENVIRONMENT, PROFILE), _J, "seconds"),
    Metric("dpone_journal_receipt_ttl_seconds", "gauge",
           "The profile's certified receipt TTL, to compare the oldest receipt's age with.",
           (ENVIRONMENT, PROFILE), _J, "seconds"),
    Metric("dpone_journal_remote_jobs_active", "gauge",
           "Remote jobs holding a capacity slot.", (ENVIRONMENT, PROFILE), _J),
    Metric("dpone_journal_remote_jobs_capacity", "gauge",
           "Remote-job slots of the effect-conflict domains with admitted work.",
           (ENVIRONMENT, PROFILE), _J),
    Metric("dpone_journal_remote_job_domains_full", "gauge",
           "Effect-conflict domains whose every remote-job slot is held.",
           (ENVIRONMENT, PROFILE), _J),
    Metric("dpone_journal_checkpoint_lag_children", "gauge",
           "Verified children whose checkpoint is not promoted yet (behind the frontier).",
           (ENVIRONMENT, PROFILE), _J),
    Metric("dpone_journal_checkpoint_lag_oldest_seconds", "gauge",
           "Time the oldest verified, unpromoted child has waited (0 when none).",
           (ENVIRONMENT, PROFILE), _J, "seconds"),
    Metric("dpone_journal_source_lag_seconds", "gauge",
           "Time since the end of the newest admitted source boundary.",
           (ENVIRONMENT, PROFILE), _J, "seconds"),
    Metric("dpone_journal_retention_backlog_parents", "gauge",
           "Parents whose payloads are eligible for `dpone admin prune` and not pruned yet.",
           (ENVIRONMENT, PROFILE), _J),
    Metric("dpone_journal_recovery_actions_total", "counter",
           "Audited operator recovery actions.",
           (ENVIRONMENT, Label("action", "The operator command.", RECOVERY_ACTIONS)), _J),
    Metric("dpone_journal_revocations", "gauge",
           "Revoked profiles and bindings.",
           (ENVIRONMENT, Label("kind", "What is revoked.", ("profile", "binding"))), _J),
    Metric("dpone_journal_held_children", "gauge",
           "Unfinished children whose parent's profile or binding is revoked, or whose remote "
           "identity attestation has expired: scheduled work that may not submit.",
           (ENVIRONMENT, PROFILE, Label("reason", "Why it may not submit.", HOLD_REASONS)), _J),
    Metric("dpone_journal_mutation_gate_blocked", "gauge",
           "1 when the environment's mutation gate is BLOCKED.", (ENVIRONMENT,), _J),
    Metric("dpone_journal_epoch", "gauge", "The environment's journal epoch.", (ENVIRONMENT,), _J),
)

BY_NAME: Final = {metric.name: metric for metric in METRICS}

FORBIDDEN_LABELS: Final = frozenset({
    "operation_id", "parent_id", "child", "ordinal", "digest", "plan_digest", "url", "path",
    "endpoint", "receipt", "job_id", "attempt", "holder", "key", "domain", "tenant"})
"""Label names that would carry a per-delivery or unbounded value."""


def status_class(status: int | None) -> str:
    """The :data:`STATUS_CLASSES` value of an HTTP status (``none`` without one)."""
    if status is None or not 100 <= status <= 599:
        return "none"
    return f"{status // 100}xx"


def recovery_action(transition_id: str) -> str:
    """The :data:`RECOVERY_ACTIONS` value of an audited recovery transition id."""
    command = transition_id.removeprefix("operator_")
    return command if command in RECOVERY_ACTIONS else "other"
