"""The query by key against the real mock receiver over loopback (on both journals).

The async example certifies ``acknowledgement.query_by_key`` for local-dev: a GET of the child's
receiver mutation key answers the job submitted under it (its filename echoed) or 404. Found
gives the job's receipt; 404 proves "not applied" only in a certified environment once the
latest attempt started at least receipt TTL + skew ago; an answer echoing another key's job
proves nothing. Every lookup is a read: the receiver's ledger shows no mutation from it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from dpone.contracts.journal import ChildOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.reconcile.query_by_key import (
    KeyAbsentProven,
    KeyAbsentUnproven,
    KeyFound,
    KeyQueryResult,
    KeyQueryUnavailable,
    query_by_key,
)
from support.delivery import Harness, HarnessFactory

ONE_JOB = (dt.date(2026, 8, 1), dt.date(2026, 8, 4))
TWO_JOBS = (dt.date(2026, 8, 1), dt.date(2026, 8, 7))
LOOKUP = "GET /mock/v1/dataset-job-keys/"


class WorkerLost(Exception):
    """The worker stops right after a journal step (its process is gone)."""


def _horizon(plan: RestDeliveryPlan) -> dt.timedelta:
    query = plan.profile.snapshot.acknowledgement.query_by_key
    assert query is not None
    return dt.timedelta(seconds=query.absence.receipt_ttl_s + query.absence.skew_margin_s)


def _latest_attempt(h: Harness, child: ChildOperation) -> dt.datetime:
    started = h.journal.list_attempts(child.operation_id)[-1]["started_at"]
    assert isinstance(started, dt.datetime)
    return started


def _query(h: Harness, ordinal: int, *, after: dt.timedelta,
           plan: RestDeliveryPlan | None = None) -> KeyQueryResult:
    """Query child ``ordinal`` ``after`` its latest attempt started; the lookup is one read."""
    child = h.child(ordinal)
    latest = _latest_attempt(h, child)
    before: dict[str, Any] = h.receiver.state.ledger.snapshot()
    result = query_by_key(h.transport, plan or h.plan, child, h.topology.children[ordinal - 1],
                          now=latest + after, latest_attempt_at=latest)
    after_ledger = h.receiver.state.ledger.snapshot()
    assert after_ledger["mutations"] == before["mutations"]  # a lookup is never a mutation
    lookups = {line: n for line, n in after_ledger["requests"].items() if line.startswith(LOOKUP)}
    expected = f"{LOOKUP}{child.receiver_mutation_key}"
    assert lookups[expected] == before["requests"].get(expected, 0) + 1
    assert sum(after_ledger["requests"].values()) == sum(before["requests"].values()) + 1
    return result


def _stop_before_sending_child(h: Harness, ordinal: int) -> None:
    """Run until child ``ordinal`` entered SUBMITTING, then lose the worker before its POST."""

    def stop(operation: ChildOperation, transition_id: str) -> None:
        if operation.ordinal == ordinal and transition_id == "enter_submitting":
            raise WorkerLost

    with pytest.raises(WorkerLost):
        h.run(on_step=stop)


def test_a_submitted_child_is_found_with_its_journal_receipt(harness: HarnessFactory) -> None:
    h = harness("async", ONE_JOB)
    h.run()
    child = h.child(1)

    result = _query(h, 1, after=dt.timedelta(0))

    assert isinstance(result, KeyFound), result
    assert result.receipt == {"id": (child.receipt or {})["id"]}
    assert result.evidence == {"http_status": 200, "key_echo": "matched"}
    assert h.ledger()["duplicate_mutations"] == 0


def test_a_key_never_sent_is_proven_absent_past_the_horizon(harness: HarnessFactory) -> None:
    h = harness("async", TWO_JOBS)
    _stop_before_sending_child(h, 2)
    assert h.child(2).state_name.startswith("submitting")

    result = _query(h, 2, after=_horizon(h.plan))

    assert result == KeyAbsentProven(evidence={"http_status": 404})
    assert [m["key"] for m in h.ledger()["mutations"]] == [h.sealed.mutation_key(1)]


def test_an_absence_before_the_horizon_proves_nothing_yet(harness: HarnessFactory) -> None:
    h = harness("async", TWO_JOBS)
    _stop_before_sending_child(h, 2)
    latest = _latest_attempt(h, h.child(2))

    result = _query(h, 2, after=_horizon(h.plan) - dt.timedelta(seconds=1))

    assert result == KeyAbsentUnproven(reason="horizon_not_reached",
                                       proof_possible_at=latest + _horizon(h.plan),
                                       evidence={"http_status": 404})


def test_an_absence_in_an_uncertified_environment_proves_nothing(harness: HarnessFactory) -> None:
    h = harness("async", TWO_JOBS)
    _stop_before_sending_child(h, 2)
    snapshot = h.plan.profile.snapshot
    query = snapshot.acknowledgement.query_by_key
    assert query is not None
    absence = query.absence.model_copy(update={"certified_environments": ("production",)})
    ack = snapshot.acknowledgement.model_copy(
        update={"query_by_key": query.model_copy(update={"absence": absence})})
    plan = h.plan.model_copy(update={"profile": h.plan.profile.model_copy(
        update={"snapshot": snapshot.model_copy(update={"acknowledgement": ack})})})

    result = _query(h, 2, after=dt.timedelta(days=30), plan=plan)

    assert result == KeyAbsentUnproven(reason="not_certified_here", evidence={"http_status": 404})


def test_a_found_job_echoing_another_key_proves_nothing(harness: HarnessFactory) -> None:
    """The receiver holds a foreign job whose filename shares our key's hex but not our file:
    its answer echoes that other filename, so it is not an answer about this child."""
    h = harness("async", ONE_JOB)
    ours = h.topology.children[0].request.filename
    assert ours is not None
    theirs = ours.split(".", 1)[0] + ".ndjson"
    jobs, now = h.receiver.state.jobs, h.receiver.state.now()
    foreign = jobs.create(filename=theirs, rows=[], now=now, scope={})
    h.run()
    assert (h.child(1).receipt or {})["id"] != foreign.job_id

    result = _query(h, 1, after=_horizon(h.plan))

    assert result == KeyQueryUnavailable(reason="key_echo_mismatch",
                                         evidence={"http_status": 200, "key_echo": "mismatch"})
