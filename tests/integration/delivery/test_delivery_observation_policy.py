"""The profile's observability and retention policy at run time, over loopback on both journals:
``max_observations`` bounds the polls of one receipt across runs, ``evidence_scalars`` is the
allowlist of response scalars an observation keeps, and ``retention.observation_days`` expires
the observations of finalized children when the next delivery under the profile is admitted."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import psycopg
import pytest

from dpone.contracts import DponeError
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.supervisor import DeliveryBlocked, observe_receipt
from dpone.receiver import ReceiverThread
from support.delivery import HOLDER, Harness, HarnessFactory


def _observability(h: Harness, **update: object) -> RestDeliveryPlan:
    snapshot = h.plan.profile.snapshot
    observability = snapshot.observability.model_copy(update=update)
    profile = h.plan.profile.model_copy(update={
        "snapshot": snapshot.model_copy(update={"observability": observability})})
    return h.plan.model_copy(update={"profile": profile})


def test_a_receipt_is_polled_at_most_max_observations_times_across_runs(
        harness: HarnessFactory, slow_receiver: ReceiverThread) -> None:
    h = harness("async", receiver=slow_receiver)
    bounded = _observability(h, max_observations=3)

    first = h.run(plan=bounded)

    assert isinstance(first, DeliveryBlocked), first
    assert first.code == "observation.limit_reached"
    assert first.remote_effect == "UNDETERMINED"
    assert (first.evidence["observations"], first.evidence["max_observations"]) == (3, 3)
    assert set(first.allowed_actions) == {"inspect_evidence", "query_by_delivery_key",
                                          "reconcile_delivery_key"}
    child = h.child(1)
    job = (child.receipt or {})["id"]
    assert child.state_name in ("accepted", "waiting")
    assert child.observation_ordinal == 3
    assert h.requests().get(f"GET /mock/v1/dataset-jobs/{job}") == 3
    assert h.count("POST") == 1

    again = h.run(plan=bounded)  # a later run: nothing polled, nothing sent, nothing recorded

    assert isinstance(again, DeliveryBlocked) and again.code == "observation.limit_reached"
    assert h.requests().get(f"GET /mock/v1/dataset-jobs/{job}") == 3
    assert h.count("POST") == 1
    assert (h.child(1).revision, h.child(1).observation_ordinal) == (child.revision, 3)


def test_a_single_observation_past_the_bound_says_so(
        harness: HarnessFactory, slow_receiver: ReceiverThread) -> None:
    """What a trigger runs: once the bound is reached it raises, so the trigger fires and the
    task reports the stop, instead of waiting on a child nobody polls any more."""
    h = harness("async", receiver=slow_receiver)
    bounded = _observability(h, max_observations=2)
    assert isinstance(h.run(plan=bounded), DeliveryBlocked)
    child = h.child(1)
    polls = h.requests().get(f"GET /mock/v1/dataset-jobs/{(child.receipt or {})['id']}")

    with pytest.raises(DponeError) as stopped:
        observe_receipt(bounded, child.operation_id, h.journal, h.store, h.transport,
                        holder=HOLDER)

    assert stopped.value.code == "observation.limit_reached"
    assert h.requests().get(f"GET /mock/v1/dataset-jobs/{(child.receipt or {})['id']}") == polls
    assert h.child(1).revision == child.revision


def test_an_observation_keeps_only_the_allowlisted_response_scalars(
        harness: HarnessFactory) -> None:
    h = harness("async")
    listed = h.plan.profile.snapshot.observability.evidence_scalars
    assert listed == ("job_id", "phase", "rows_accepted", "rows_rejected")

    h.run()

    child = h.child(1)
    observations = h.journal.list_observations(child.operation_id)
    assert observations
    for observation in observations:
        kept = observation["document"]["evidence_scalars"]
        assert kept["job_id"] == (child.receipt or {})["id"]
        assert set(kept) == set(listed)  # the answer's filename is not listed: never kept


def test_a_narrower_allowlist_keeps_fewer_scalars(harness: HarnessFactory) -> None:
    h = harness("async")

    h.run(plan=_observability(h, evidence_scalars=("phase", "not_in_the_answer")))

    observations = h.journal.list_observations(h.child(1).operation_id)
    assert [o["document"]["evidence_scalars"] for o in observations] == [{"phase": "complete"}]
    assert observations[0]["document"]["rejected_rows"] == 0  # the fixed scalars stay


def _age_observations(dialect: str, where: str, operation_id: str, days: int) -> None:
    """Move the child's observations ``days`` back on the database clock."""
    if dialect == "sqlite":
        with sqlite3.connect(Path(where) / "journal.sqlite3") as connection:
            connection.execute(
                "UPDATE rest_delivery_observation SET observed_at = "
                "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) WHERE operation_id = ?",
                (f"-{days} days", operation_id))
        return
    with psycopg.connect(where, autocommit=True) as connection:
        connection.execute(
            "UPDATE rest_delivery_observation SET observed_at = clock_timestamp() - "
            "make_interval(days => %s) WHERE operation_id = %s", (days, operation_id))


def test_observations_of_finalized_children_expire_after_observation_days(
        harness: HarnessFactory, dialect: str, journal_location: tuple[str, str]) -> None:
    h = harness("async")
    assert h.plan.profile.snapshot.retention.observation_days == 30
    h.run()
    old, young = h.child(1), h.child(2)
    assert old.state_name == young.state_name == "final_succeeded_full_promoted"
    _age_observations(dialect, journal_location[0], old.operation_id, 31)
    _age_observations(dialect, journal_location[0], young.operation_id, 29)
    assert h.journal.list_observations(old.operation_id)

    later = harness("async", (dt.date(2026, 8, 7), dt.date(2026, 8, 10)), store="later")
    later.run()  # admitted under the same profile contract: its admission applies retention

    assert h.journal.list_observations(old.operation_id) == []
    assert h.journal.list_observations(young.operation_id)
    assert later.journal.list_observations(later.child(1).operation_id)
    kept = h.journal.get_child(old.operation_id)  # the receipt and the effect authority stay
    assert (kept.receipt, kept.axes, kept.revision) == (old.receipt, old.axes, old.revision)
