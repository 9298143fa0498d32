"""The journal's metrics snapshot (``metrics_snapshot``) and the Prometheus collector over it, on
both journals, over states real delivery runs leave against the mock receiver: a receipt being
observed that holds its domain's only remote-job slot, an UNKNOWN effect after a reset, a child
verified but not promoted, held children under revocations and an expired attestation, a
retention backlog, audited recovery actions.

Every age is checked against the journal's own timestamps (attempt rows, the journal clock),
every exposed family against the metrics catalogue: a catalogue entry, its label names exactly,
every label value one its label admits, and no value that names an operation, a digest or an
operation namespace. A journal that cannot be read answers ``dpone_journal_up 0`` and nothing
else, and the next readable scrape is whole again.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import psycopg
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from dpone.compiler.profile_lookup import load_profile
from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, OperatorActionRecord
from dpone.contracts.journal_metrics import AXIS_STATES, JournalMetricsSnapshot, ProfileMetrics
from dpone.contracts.metrics import BY_NAME, FORBIDDEN_LABELS, METRICS
from dpone.contracts.ports import JournalMetricsView
from dpone.contracts.revocation import RevocationTarget
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted
from dpone.journal.postgres import PostgresJournal
from dpone.journal.sqlite import SqliteJournal
from dpone.observability.journal_metrics import JournalMetricsCollector
from dpone.receiver import ReceiverThread
from support.common import EXAMPLES, free_port
from support.delivery import ENVIRONMENT, Harness, HarnessFactory
from support.telemetry import assert_catalogued

ASYNC_PROFILE = "mock.dataset-jobs"
SYNC_PROFILE = "mock.batch-ndjson"
SHORT_END = dt.datetime(2026, 8, 7, tzinfo=dt.UTC)  # the end of support.delivery.SHORT


class WorkerLost(Exception):
    """The worker stops right after one journal step is durable."""


def _stop_after(ordinal: int, transition: str) -> Callable[[ChildOperation, str], None]:
    def hook(operation: ChildOperation, transition_id: str) -> None:
        if operation.ordinal == ordinal and transition_id == transition:
            raise WorkerLost

    return hook


def _snapshot(journal: DeliveryJournalPort) -> JournalMetricsSnapshot:
    """The test journal's metrics snapshot (both adapters are a JournalMetricsView)."""
    return cast(JournalMetricsView, journal).metrics_snapshot(ENVIRONMENT)


def _profile(snapshot: JournalMetricsSnapshot, name: str) -> ProfileMetrics:
    [found] = [profile for profile in snapshot.profiles if profile.profile == name]
    return found


def _attempt_time(h: Harness, ordinal: int, column: str) -> dt.datetime:
    """The journal's ``started_at`` or ``outcome_at`` of the child's current attempt."""
    child = h.child(ordinal)
    [attempt] = [a for a in h.journal.list_attempts(child.operation_id)
                 if a["attempt_ordinal"] == child.attempt_ordinal]
    moment: dt.datetime = attempt[column]
    return moment


def _axis_totals(profile: ProfileMetrics) -> dict[str, int]:
    return {axis: sum(profile.on_axis(axis, state) for state in states)
            for axis, states in AXIS_STATES.items()}


@pytest.fixture
def same_store(dialect: str, journal_location: tuple[str, str]
               ) -> Iterator[Callable[..., DeliveryJournalPort]]:
    """Open another journal adapter on the test's store (``operation_namespace`` optional)."""
    where, _schema = journal_location
    opened: list[SqliteJournal | PostgresJournal] = []

    def open_again(operation_namespace: str | None = None) -> DeliveryJournalPort:
        adapter: SqliteJournal | PostgresJournal
        if dialect == "sqlite":
            adapter = SqliteJournal(Path(where) / "journal.sqlite3", environment_id=ENVIRONMENT,
                                    operation_namespace=operation_namespace)
        else:
            adapter = PostgresJournal(where, environment_id=ENVIRONMENT,
                                      operation_namespace=operation_namespace)
        opened.append(adapter)
        return adapter

    yield open_again
    for adapter in opened:
        adapter.close()


@pytest.fixture
def store_sql(dialect: str, journal_location: tuple[str, str]) -> Callable[[str], None]:
    """Run one statement on the test's store behind the journal's back (the tests age a
    delivery, expire an attestation or hide a table with it)."""
    where, _schema = journal_location

    def run(statement: str) -> None:
        if dialect == "sqlite":
            with sqlite3.connect(Path(where) / "journal.sqlite3") as connection:
                connection.execute(statement)
            return
        with psycopg.connect(where, autocommit=True) as connection:
            connection.execute(statement.encode())

    return run


def test_a_receipt_being_observed_holds_the_domain_s_only_slot(
        harness: HarnessFactory, slow_receiver: ReceiverThread) -> None:
    h = harness("async", receiver=slow_receiver)
    with pytest.raises(WorkerLost):
        h.run(on_step=_stop_after(1, "submitting_async_receipt_accepted"))
    recorded = _attempt_time(h, 1, "outcome_at")

    snapshot = _snapshot(h.journal)

    assert snapshot.environment_id == ENVIRONMENT
    assert [profile.profile for profile in snapshot.profiles] == [ASYNC_PROFILE]
    jobs = _profile(snapshot, ASYNC_PROFILE)
    assert (jobs.on_axis("execution_state", "ACCEPTED"), jobs.on_axis("execution_state", "SEALED"),
            jobs.on_axis("acknowledgement_state", "ACCEPTED")) == (1, 1, 1)
    assert set(_axis_totals(jobs).values()) == {2}  # both children on every axis
    assert jobs.receipts_observed == 1
    assert jobs.receipt_oldest_age_s == pytest.approx(
        (snapshot.journal_now - recorded).total_seconds(), abs=1e-3)
    assert jobs.ttl_profile_ref == f"{ASYNC_PROFILE}@1"
    assert h.plan.profile.snapshot.rate.max_active_remote_jobs == 1
    assert (jobs.remote_jobs_active, jobs.remote_jobs_capacity,
            jobs.remote_job_domains_full) == (1, 1, 1)
    assert (jobs.unknown_effects, jobs.unknown_effect_oldest_age_s) == (0, 0.0)
    assert (jobs.checkpoint_lag_children, jobs.held_children) == (0, ())
    assert jobs.source_lag_s == pytest.approx(
        (snapshot.journal_now - SHORT_END).total_seconds(), abs=1e-3)
    assert snapshot.journal_now <= h.journal.now()


def test_an_unknown_effect_is_as_old_as_the_attempt_that_may_have_applied_it(
        harness: HarnessFactory) -> None:
    h = harness("sync")
    h.fail_submit("commit_then_drop")
    blocked = h.run()
    assert isinstance(blocked, DeliveryBlocked), blocked
    unknown = h.child(1)
    assert unknown.axes.remote_effect == "UNKNOWN"
    started = _attempt_time(h, 1, "started_at")

    snapshot = _snapshot(h.journal)

    batch = _profile(snapshot, SYNC_PROFILE)
    assert batch.unknown_effects == 1 and batch.on_axis("remote_effect", "UNKNOWN") == 1
    assert batch.unknown_effect_oldest_age_s == pytest.approx(
        (snapshot.journal_now - started).total_seconds(), abs=1e-3)
    assert batch.unknown_effect_oldest_age_s > 0
    # The unknown effect keeps its remote-job slot: its domain stays at work, and full.
    assert (batch.remote_jobs_active, batch.remote_jobs_capacity,
            batch.remote_job_domains_full) == (1, 1, 1)
    assert batch.receipts_observed == 0

    later = _snapshot(h.journal)  # the age grows with the journal clock
    assert _profile(later, SYNC_PROFILE).unknown_effect_oldest_age_s == pytest.approx(
        (later.journal_now - started).total_seconds(), abs=1e-3)


def test_a_verified_child_waits_for_its_checkpoint_until_the_frontier_moves(
        harness: HarnessFactory) -> None:
    h = harness("async")
    before = h.journal.now()
    with pytest.raises(WorkerLost):
        h.run(on_step=_stop_after(1, "verifying_succeeded_verified_full"))
    verified_by = h.journal.now()

    snapshot = _snapshot(h.journal)

    lagging = _profile(snapshot, ASYNC_PROFILE)
    assert lagging.checkpoint_lag_children == 1
    assert lagging.on_axis("checkpoint_state", "ELIGIBLE") == 1
    assert lagging.on_axis("verification_state", "PASSED") == 1
    # Verified after `before` and no later than `verified_by` (journal clock).
    waited = lagging.checkpoint_lag_oldest_s
    assert (snapshot.journal_now - verified_by).total_seconds() <= waited + 1e-3
    assert waited <= (snapshot.journal_now - before).total_seconds() + 1e-3

    assert isinstance(h.run(), DeliveryCompleted)
    done = _profile(_snapshot(h.journal), ASYNC_PROFILE)
    assert (done.checkpoint_lag_children, done.checkpoint_lag_oldest_s) == (0, 0.0)
    assert done.on_axis("checkpoint_state", "PROMOTED") == 2
    assert done.on_axis("execution_state", "FINALIZED") == 2
    # Nothing left at work: no slot held, no domain counted.
    assert (done.remote_jobs_active, done.remote_jobs_capacity,
            done.remote_job_domains_full) == (0, 0, 0)


def test_revocations_and_an_expired_attestation_hold_the_children_waiting_to_submit(
        harness: HarnessFactory, store_sql: Callable[[str], None]) -> None:
    h = harness("async")
    profile, binding = h.plan.profile.ref, h.plan.binding.ref
    h.journal.set_revocation(ENVIRONMENT, RevocationTarget(kind="profile", ref=profile),
                             revoked=True, actor="sec", reason="advisory")
    with pytest.raises(DponeError) as refused:
        h.run()
    assert refused.value.code == "governance.profile_revoked"
    h.journal.set_revocation(ENVIRONMENT, RevocationTarget(kind="binding", ref=binding),
                             revoked=True, actor="sec", reason="advisory")

    held = _snapshot(h.journal)

    jobs = _profile(held, ASYNC_PROFILE)
    waiting = jobs.on_axis("execution_state", "SEALED")
    assert waiting == 2
    assert (held.revoked_profiles, held.revoked_bindings) == (1, 1)
    assert (jobs.held("profile_revoked"), jobs.held("binding_revoked"),
            jobs.held("identity_expired")) == (2, 2, 0)

    store_sql("UPDATE rest_delivery_parent SET identity_valid_until = "
              + ("strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 seconds')"
                 if isinstance(h.journal, SqliteJournal)
                 else "clock_timestamp() - interval '1 second'"))
    h.journal.set_revocation(ENVIRONMENT, RevocationTarget(kind="profile", ref=profile),
                             revoked=False, actor="sec", reason="cleared")
    h.journal.set_mutation_gate(ENVIRONMENT, "BLOCKED", epoch=3, actor="ops", reason="restore")

    expired = _snapshot(h.journal)

    jobs = _profile(expired, ASYNC_PROFILE)
    assert (jobs.held("profile_revoked"), jobs.held("binding_revoked"),
            jobs.held("identity_expired")) == (0, 2, 2)
    assert (expired.revoked_profiles, expired.revoked_bindings) == (0, 1)
    assert (expired.mutation_gate_blocked, expired.journal_epoch) == (True, 3)


def test_retention_backlog_and_recovery_actions(
        harness: HarnessFactory, store_sql: Callable[[str], None]) -> None:
    h = harness("sync")
    assert isinstance(h.run(), DeliveryCompleted)
    parent = h.parent()
    days = h.plan.profile.snapshot.retention.payload_days
    assert days is not None
    assert _profile(_snapshot(h.journal),
                    SYNC_PROFILE).retention_backlog_parents == 0  # young
    if isinstance(h.journal, SqliteJournal):
        store_sql("UPDATE rest_delivery_parent SET admitted_at = strftime("
                  f"'%Y-%m-%dT%H:%M:%fZ', 'now', '-{days + 1} days')")
    else:
        store_sql("UPDATE rest_delivery_parent SET admitted_at = clock_timestamp() - "
                  f"make_interval(days => {days + 1})")

    aged = _snapshot(h.journal)

    assert _profile(aged, SYNC_PROFILE).retention_backlog_parents == 1
    assert [p.parent_id for p in h.journal.payload_retention(ENVIRONMENT).eligible] == [
        parent.parent_id]  # the same decision as `dpone admin prune`

    h.journal.expire_payloads(ENVIRONMENT, actor="retention-bot")
    h.journal.record_operator_action(OperatorActionRecord(
        operation_id=parent.parent_id, command="resume", actor="ops", before_revision=0,
        after_revision=0))
    pruned = _snapshot(h.journal)

    assert _profile(pruned, SYNC_PROFILE).retention_backlog_parents == 0
    assert {a.action: a.actions for a in pruned.recovery_actions} == {"prune": 1, "resume": 1}


def test_the_snapshot_is_environment_wide_whatever_namespace_opens_it(
        harness: HarnessFactory, same_store: Callable[..., DeliveryJournalPort]) -> None:
    h = harness("sync")
    h.fail_submit("commit_then_drop")
    h.run()
    foreign = same_store(operation_namespace="sha256:" + "f" * 64)

    def numbers(journal: DeliveryJournalPort) -> dict[str, object]:
        document = _snapshot(journal).model_dump(mode="json")
        for profile in document["profiles"]:
            for field in list(profile):
                if field.endswith("_s"):
                    profile.pop(field)  # ages move with the clock
        return {key: value for key, value in document.items() if key != "journal_now"}

    assert numbers(foreign) == numbers(h.journal)
    namespace = h.parent().children[0].tenancy.operation_namespace
    dumped = _snapshot(h.journal).model_dump_json()
    assert namespace not in dumped and "op_v1_" not in dumped and "sha256:" not in dumped
    with pytest.raises(DponeError) as other:
        cast(JournalMetricsView, h.journal).metrics_snapshot("another-environment")
    assert other.value.code == "journal.not_found"


# --- the collector --------------------------------------------------------------------------


def _scrape(collector: JournalMetricsCollector) -> dict[str, dict[tuple[tuple[str, str], ...],
                                                                   float]]:
    """One scrape in the text exposition format, parsed back: family name (the catalogue's) ->
    sorted labels -> value; every family checked against the catalogue on the way."""
    registry = CollectorRegistry()
    registry.register(collector)
    exposition = generate_latest(registry).decode("utf-8")
    families: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(exposition):
        name = family.name + "_total" if family.type == "counter" else family.name
        metric = BY_NAME.get(name)
        assert metric is not None, f"{name} is not in the metrics catalogue"
        assert (metric.source, metric.type) == ("journal", family.type), name
        samples = families.setdefault(name, {})
        for sample in family.samples:
            assert sample.name == name
            assert_catalogued(name, sample.labels, "journal")
            assert not set(sample.labels) & FORBIDDEN_LABELS
            for value in sample.labels.values():
                assert "op_v1_" not in value and "sha256" not in value
            samples[tuple(sorted(sample.labels.items()))] = sample.value
    return families


def _ttl(ref: str) -> int | None:
    return load_profile(EXAMPLES, ref).timeouts.receipt_ttl_s


def test_a_scrape_exposes_every_journal_metric_of_the_catalogue_and_nothing_else(
        harness: HarnessFactory) -> None:
    h = harness("sync")
    h.fail_submit("commit_then_drop")
    h.run()
    h.journal.set_mutation_gate(ENVIRONMENT, "BLOCKED", epoch=2, actor="ops", reason="restore")

    scraped = _scrape(JournalMetricsCollector(h.journal, ENVIRONMENT, receipt_ttl=_ttl))

    journal_metrics = {metric.name for metric in METRICS if metric.source == "journal"}
    assert set(scraped) == journal_metrics
    here = (("environment", ENVIRONMENT),)
    assert scraped["dpone_journal_up"] == {here: 1.0}
    assert scraped["dpone_journal_mutation_gate_blocked"] == {here: 1.0}
    assert scraped["dpone_journal_epoch"] == {here: 2.0}
    profile = ("profile", SYNC_PROFILE)

    def one(name: str, *labels: tuple[str, str]) -> float:
        return scraped[name][tuple(sorted((*here, profile, *labels)))]

    assert one("dpone_journal_children", ("axis", "remote_effect"), ("state", "UNKNOWN")) == 1
    assert one("dpone_journal_children", ("axis", "remote_effect"), ("state", "NONE_PROVEN")) == 0
    assert len(scraped["dpone_journal_children"]) == sum(len(s) for s in AXIS_STATES.values())
    assert one("dpone_journal_unknown_effect_oldest_age_seconds") > 0
    assert one("dpone_journal_receipt_ttl_seconds") == _ttl(h.plan.profile.ref)
    assert one("dpone_journal_remote_jobs_active") == 1
    assert len(scraped["dpone_journal_held_children"]) == 3
    assert scraped["dpone_journal_recovery_actions_total"] == {
        (("action", action), *here): 0.0
        for action in ("capacity_repair", "other", "prune", "reconcile", "resume")}


def test_an_unreadable_journal_answers_up_0_and_nothing_stale(
        harness: HarnessFactory, store_sql: Callable[[str], None]) -> None:
    h = harness("sync")
    assert isinstance(h.run(), DeliveryCompleted)
    collector = JournalMetricsCollector(h.journal, ENVIRONMENT)
    assert len(_scrape(collector)) > 3 and collector.up is True

    store_sql("ALTER TABLE rest_delivery_child RENAME TO rest_delivery_child_hidden")
    down = _scrape(collector)

    assert down == {"dpone_journal_up": {(("environment", ENVIRONMENT),): 0.0}}
    assert collector.up is False

    store_sql("ALTER TABLE rest_delivery_child_hidden RENAME TO rest_delivery_child")
    back = _scrape(collector)
    assert back["dpone_journal_up"] == {(("environment", ENVIRONMENT),): 1.0}
    assert collector.up is True and len(back) > 3


def test_a_journal_that_cannot_be_reached_answers_up_0(dialect: str, tmp_path: Path) -> None:
    journal: SqliteJournal | PostgresJournal
    if dialect == "sqlite":
        journal = SqliteJournal(tmp_path / "missing" / "journal.sqlite3",
                                environment_id=ENVIRONMENT)
    else:
        journal = PostgresJournal(f"postgresql://dpone@127.0.0.1:{free_port()}/dpone"
                                  "?connect_timeout=2", environment_id=ENVIRONMENT)
    try:
        assert _scrape(JournalMetricsCollector(journal, ENVIRONMENT)) == {
            "dpone_journal_up": {(("environment", ENVIRONMENT),): 0.0}}
    finally:
        journal.close()
