"""How the read-only query by key classifies each answer, over the real transport and
``httpx.MockTransport``: found (echo checked), absent and proven only where certified and past
the receipt TTL plus skew horizon, absent but unproven otherwise, unavailable for anything else.
Never a mutation: exactly one GET per query."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from urllib.parse import unquote

import pytest

from dpone.contracts import DponeError
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.reconcile.query_by_key import (
    KeyAbsentProven,
    KeyAbsentUnproven,
    KeyFound,
    KeyQueryResult,
    KeyQueryUnavailable,
    query_by_key,
)
from dpone.executor.supervisor import JobStatus
from support.supervisor import Reply, Supervised, drop, refuse, reply

Make = Callable[..., Supervised]
SENT = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.UTC)
"""When the child's latest submit attempt started (the profile: TTL 600 s + skew 60 s)."""
HORIZON = SENT + dt.timedelta(seconds=660)
LATER = HORIZON + dt.timedelta(days=1)


def _ask(s: Supervised, answer: Reply, *, now: dt.datetime = LATER,
         plan: RestDeliveryPlan | None = None) -> KeyQueryResult:
    """One query by key for child 1 of a delivered async example, answered by ``answer``."""
    sent = len(s.receiver.requests)
    s.receiver.polls = [answer]
    result = query_by_key(s.transport, plan or s.plan, s.child(1), s.topology.children[0],
                          now=now, latest_attempt_at=SENT)
    (request,) = s.receiver.requests[sent:]
    assert request.method == "GET"
    assert unquote(request.url.path) == (
        f"/mock/v1/dataset-job-keys/{s.child(1).receiver_mutation_key}")
    assert request.headers["authorization"].startswith("Bearer ")
    return result


@pytest.fixture
def delivered(supervised: Make) -> Supervised:
    s = supervised("async")
    s.run()
    return s


def _ours(s: Supervised) -> str:
    filename = s.topology.children[0].request.filename
    assert filename is not None
    return filename


def test_a_found_job_echoing_this_key_gives_its_receipt(delivered: Supervised) -> None:
    result = _ask(delivered, reply(200, {"job_id": "job-7", "filename": _ours(delivered),
                                         "phase": "complete"}))
    assert result == KeyFound(receipt={"id": "job-7"},
                              evidence={"http_status": 200, "key_echo": "matched"},
                              status=JobStatus(outcome="succeeded", values={
                                  "http_status": 200, "key_echo": "matched",
                                  "phase": "complete"}))


@pytest.mark.parametrize("body", [
    {"job_id": "job-7", "filename": "7b" * 32 + ".csv.gz"},   # another key's job
    {"job_id": "job-7"},                                        # no echo
    {"job_id": "job-7", "filename": None},
], ids=["other-key", "no-echo", "null-echo"])
def test_a_found_answer_about_another_key_proves_nothing(delivered: Supervised,
                                                         body: dict[str, object]) -> None:
    result = _ask(delivered, reply(200, body))
    assert result == KeyQueryUnavailable(reason="key_echo_mismatch",
                                         evidence={"http_status": 200, "key_echo": "mismatch"})


def test_a_found_answer_without_the_receipt_is_unreadable(delivered: Supervised) -> None:
    result = _ask(delivered, reply(200, {"filename": _ours(delivered), "phase": "complete"}))
    assert isinstance(result, KeyQueryUnavailable) and result.reason == "unreadable_answer"


@pytest.mark.parametrize("now", [HORIZON, LATER], ids=["at-horizon", "after"])
def test_a_certified_absence_past_the_horizon_is_proof(delivered: Supervised,
                                                       now: dt.datetime) -> None:
    result = _ask(delivered, reply(404, {"error": "not_found"}), now=now)
    assert result == KeyAbsentProven(evidence={"http_status": 404})


def test_an_absence_before_the_horizon_says_when_it_would_prove(delivered: Supervised) -> None:
    early = HORIZON - dt.timedelta(seconds=1)
    result = _ask(delivered, reply(404, {"error": "not_found"}), now=early)
    assert result == KeyAbsentUnproven(reason="horizon_not_reached", proof_possible_at=HORIZON,
                                       evidence={"http_status": 404})


def test_an_absence_where_it_is_not_certified_is_no_proof(delivered: Supervised) -> None:
    snapshot = delivered.plan.profile.snapshot
    query = snapshot.acknowledgement.query_by_key
    assert query is not None and delivered.plan.environment.ref in query.absence.certified_environments
    elsewhere = query.model_copy(update={"absence": query.absence.model_copy(
        update={"certified_environments": ("prod",)})})
    ack = snapshot.acknowledgement.model_copy(update={"query_by_key": elsewhere})
    profile = delivered.plan.profile.model_copy(
        update={"snapshot": snapshot.model_copy(update={"acknowledgement": ack})})
    plan = delivered.plan.model_copy(update={"profile": profile})

    result = _ask(delivered, reply(404, {"error": "not_found"}), plan=plan)

    assert result == KeyAbsentUnproven(reason="not_certified_here", evidence={"http_status": 404})


@pytest.mark.parametrize("status", [410, 401, 403, 429, 500, 503, 204])
def test_an_unclassified_status_is_unavailable(delivered: Supervised, status: int) -> None:
    result = _ask(delivered, reply(status, {"error": "x"} if status != 204 else None))
    assert result == KeyQueryUnavailable(reason="unclassified_status",
                                         evidence={"http_status": status})


@pytest.mark.parametrize(("failure", "phase"), [(refuse, "not_started"),
                                                (drop, "may_have_reached")])
def test_a_transport_failure_is_unavailable(delivered: Supervised, failure: Reply,
                                            phase: str) -> None:
    result = _ask(delivered, failure)
    assert isinstance(result, KeyQueryUnavailable) and result.reason == "transport_failure"
    assert result.evidence["transport_phase"] == phase


def test_a_profile_without_a_query_by_key_is_refused_before_any_request(supervised: Make) -> None:
    s = supervised("sync")
    s.run()
    sent = len(s.receiver.requests)
    with pytest.raises(DponeError) as caught:
        query_by_key(s.transport, s.plan, s.child(1), s.topology.children[0], now=LATER,
                     latest_attempt_at=SENT)
    assert caught.value.code == "input.invalid_argument"
    assert caught.value.hint is not None and "--receipt-id" in caught.value.hint
    assert len(s.receiver.requests) == sent


def test_a_sealed_child_of_another_operation_is_refused(delivered: Supervised) -> None:
    sent = len(delivered.receiver.requests)
    with pytest.raises(DponeError) as caught:
        query_by_key(delivered.transport, delivered.plan, delivered.child(1),
                     delivered.topology.children[1], now=LATER, latest_attempt_at=SENT)
    assert caught.value.code == "REST_DELIVERY_INTENT_CONFLICT"
    assert len(delivered.receiver.requests) == sent


def test_naive_instants_are_refused(delivered: Supervised) -> None:
    with pytest.raises(DponeError) as caught:
        query_by_key(delivered.transport, delivered.plan, delivered.child(1),
                     delivered.topology.children[0], now=LATER.replace(tzinfo=None),
                     latest_attempt_at=SENT)
    assert caught.value.code == "input.invalid_argument"
