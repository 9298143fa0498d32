"""A found query by key answer that is the job's status document (``answer: job_status``, as
the async example certifies) proves the effect as a receipt poll's answer would, with one read
and no receipt poll; ``answer: receipt`` polls the receipt the lookup names, as before.

Over the real transport and ``httpx.MockTransport`` (the scripted receiver answers every GET in
order: the lookup first, then any poll)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from urllib.parse import unquote

import pytest

from dpone.contracts.design import load_state_contract
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.reconcile import Proof, prove_by_key_query, resolution
from dpone.executor.reconcile.query_by_key import KeyFound, KeyQueryUnavailable, query_by_key
from dpone.executor.supervisor import JobStatus
from support.supervisor import Reply, Supervised, reply

Make = Callable[..., Supervised]
SENT = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.UTC)
LATER = SENT + dt.timedelta(days=1)
UNKNOWN = "final_not_accepted_unknown_unverified"
"""Where a reset after commit leaves a child: the effect unknown, no receipt."""


@pytest.fixture
def delivered(supervised: Make) -> Supervised:
    s = supervised("async")
    s.run()
    return s


def _answering_receipt(plan: RestDeliveryPlan) -> RestDeliveryPlan:
    """``plan`` whose query by key certifies only that a found answer names a receipt."""
    snapshot = plan.profile.snapshot
    query = snapshot.acknowledgement.query_by_key
    assert query is not None and query.answer == "job_status"  # the example's certification
    ack = snapshot.acknowledgement.model_copy(
        update={"query_by_key": query.model_copy(update={"answer": "receipt"})})
    profile = plan.profile.model_copy(
        update={"snapshot": snapshot.model_copy(update={"acknowledgement": ack})})
    return plan.model_copy(update={"profile": profile})


def _status(s: Supervised, phase: str, **counters: int) -> Reply:
    """The receiver's job status document of child 1's job, as its lookup answers it."""
    filename = s.topology.children[0].request.filename
    return reply(200, {"job_id": "job-7", "filename": filename, "phase": phase, **counters})


def _prove(s: Supervised, *answers: Reply, plan: RestDeliveryPlan | None = None) -> Proof:
    """Reconcile child 1 by key; the receiver answers ``answers``, one per GET, and nothing more
    is sent (never a POST)."""
    sent = len(s.receiver.requests)
    s.receiver.polls = list(answers)
    child = s.child(1).model_copy(update={"state_name": UNKNOWN})
    proof = prove_by_key_query(plan or s.plan, s.transport, child, s.topology.children[0],
                               now=LATER, latest_attempt_at=SENT)
    requests = s.receiver.requests[sent:]
    assert [r.method for r in requests] == ["GET"] * len(answers) and not s.receiver.polls
    assert unquote(requests[0].url.path) == (
        f"/mock/v1/dataset-job-keys/{s.child(1).receiver_mutation_key}")
    return proof


def test_a_found_job_still_running_records_its_receipt_for_observation(
        delivered: Supervised) -> None:
    proof = _prove(delivered, _status(delivered, "running"))  # one GET: no receipt poll

    assert proof.effect == "running"
    assert (proof.detail.kind, proof.detail.authority) == ("query_by_key", "receiver_proven")
    assert proof.detail.receipt_id == "job-7"
    assert proof.receipt == {"id": "job-7", "http_status": 200, "key_echo": "matched",
                             "phase": "running"}
    assert (proof.counters.accepted_rows, proof.counters.rejected_rows) == (None, None)
    child = delivered.child(1).model_copy(update={"state_name": UNKNOWN})
    resolved = resolution(load_state_contract(), child, proof.effect)
    assert resolved.target_name == "waiting"  # observed from here with the recorded receipt
    assert resolved.target.acknowledgement_state.value == "RUNNING"
    assert "receipt_persisted" in resolved.facts


@pytest.mark.parametrize(("phase", "accepted", "rejected", "effect"), [
    ("complete", "all", 0, "applied"),
    ("incomplete", 3, "rest", "partially_applied"),
    ("error", 0, "all", "not_applied"),
])
def test_a_found_finished_job_proves_its_effect_from_its_counters(
        delivered: Supervised, phase: str, accepted: int | str, rejected: int | str,
        effect: str) -> None:
    rows = delivered.topology.children[0].descriptor.row_count
    counted = {"all": rows, "rest": rows - 3}
    answer = _status(delivered, phase, rows_accepted=counted.get(str(accepted), accepted),
                     rows_rejected=counted.get(str(rejected), rejected))

    proof = _prove(delivered, answer)

    assert proof.effect == effect
    assert proof.counters.sealed_rows == rows
    assert proof.receipt is not None and proof.receipt["phase"] == phase


def test_the_found_status_is_classified_as_the_poll_reads_it(delivered: Supervised) -> None:
    delivered.receiver.polls = [_status(delivered, "complete", rows_accepted=1, rows_rejected=0)]
    result = query_by_key(delivered.transport, delivered.plan, delivered.child(1),
                          delivered.topology.children[0], now=LATER, latest_attempt_at=SENT)
    assert result == KeyFound(
        receipt={"id": "job-7"}, evidence={"http_status": 200, "key_echo": "matched"},
        status=JobStatus(outcome="succeeded", values={
            "http_status": 200, "key_echo": "matched", "phase": "complete",
            "accepted_rows": 1, "rejected_rows": 0}))


def test_a_found_status_the_poll_echo_rejects_is_about_another_key(
        delivered: Supervised) -> None:
    """The lookup's echo and the poll's echo are both certified; each must name this child."""
    plan = delivered.plan
    snapshot = plan.profile.snapshot
    query = snapshot.acknowledgement.query_by_key
    poll = snapshot.acknowledgement.poll
    assert query is not None and poll is not None and poll.key_echo is not None
    lenient = query.model_copy(update={"key_echo": None})  # only the poll's echo checks
    ack = snapshot.acknowledgement.model_copy(update={"query_by_key": lenient})
    plan = plan.model_copy(update={"profile": plan.profile.model_copy(
        update={"snapshot": snapshot.model_copy(update={"acknowledgement": ack})})})
    delivered.receiver.polls = [reply(200, {"job_id": "job-7", "filename": "7b" * 32 + ".csv.gz",
                                            "phase": "complete"})]

    result = query_by_key(delivered.transport, plan, delivered.child(1),
                          delivered.topology.children[0], now=LATER, latest_attempt_at=SENT)

    assert isinstance(result, KeyQueryUnavailable) and result.reason == "key_echo_mismatch"


def test_answer_receipt_polls_the_receipt_and_an_expired_one_proves_nothing(
        delivered: Supervised) -> None:
    plan = _answering_receipt(delivered.plan)
    expired = reply(410, {"error": "receipt_expired"})

    proof = _prove(delivered, _status(delivered, "complete", rows_accepted=1), expired, plan=plan)

    assert proof.effect == "unknown"  # the lookup named the job; its expired receipt says nothing
    assert proof.receipt == {"id": "job-7", "http_status": 410}
    assert (proof.counters.accepted_rows, proof.counters.rejected_rows) == (None, None)
