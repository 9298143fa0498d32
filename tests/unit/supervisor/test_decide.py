"""The supervisor's pure decisions, without a journal, a store or a receiver: the family table,
the next move of a submit after each kind of exchange, and the step a verdict takes.

Table tests name one exchange per row (an answer or a transport failure, the in-flight state,
the fence, the budget spent) and the move it must give; hypothesis then attacks the rules that
keep a delivery safe for any exchange: no same-key replay without a certified fence, a replay
never before the receiver's Retry-After nor past the budget, a retry only for a request that
provably never started, every stop code the one its table names.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from typing import Any, Final

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.design import load_state_contract
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedChild
from dpone.contracts.state import StateName as S
from dpone.contracts.transport import Failure, FailureKind, Response, TransportPhase
from dpone.executor.supervisor._decide import (
    PROMOTION_STRIDE,
    SUBMIT_STOPS,
    Exchange,
    Record,
    Replay,
    RetryLater,
    Stop,
    counter_verdict,
    family_of,
    submit_move,
    verification,
)
from dpone.executor.supervisor._transitions import (
    MAY_HAVE_REACHED_UNFENCED,
    REPLAY_BUDGET_EXHAUSTED,
    SOURCE_STATES,
    THROTTLED_BEYOND_BUDGET,
    VERIFIED_FULL,
)
from support.common import EXAMPLES
from support.example_seal import SealedExample

NOW: Final = dt.datetime(2026, 8, 1, 12, 0, tzinfo=dt.UTC)
IN_FLIGHT: Final = (S.SUBMITTING, S.SUBMITTING_FENCED_REPLAY)
UNKNOWN: Final = "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
CONTRACT: Final = load_state_contract()


def _plan(name: str, *, certified: bool) -> RestDeliveryPlan:
    plan = compile_workload(EXAMPLES / "workloads" / f"{name}.yaml", EXAMPLES).plan
    fence = plan.fence.model_copy(update={
        "type": "receiver_duplicate_key" if certified else plan.fence.type,
        "certified_in_environment": certified})
    return plan.model_copy(update={"fence": fence})


SYNC: Final = _plan("measurements_sync", certified=False)
SYNC_FENCED: Final = _plan("measurements_sync", certified=True)
ASYNC: Final = _plan("measurements_async", certified=True)
_UNFENCED_ASYNC: Final = _plan("measurements_async", certified=False)


@pytest.fixture(scope="module")
def sealed(sealed_short: dict[str, SealedExample]) -> dict[str, SealedChild]:
    return {family: example.topology.children[0] for family, example in sealed_short.items()}


def _answer(status: int, body: object = None, **headers: str) -> Response:
    return Response(status=status, headers=headers, body=json.dumps(body or {}).encode())


def _failure(phase: TransportPhase) -> Failure:
    return Failure(phase, FailureKind.READ_TIMEOUT if phase is TransportPhase.MAY_HAVE_REACHED
                   else FailureKind.CONNECT, "test")


def _exchange(state: S = S.SUBMITTING, attempt: int = 1, elapsed_s: float = 0.0) -> Exchange:
    return Exchange(state, attempt, elapsed_s, NOW, random.Random(7))


# --- the family table ---------------------------------------------------------------------------

def test_each_family_is_described_once() -> None:
    sync, bulk = family_of(SYNC.profile.snapshot), family_of(ASYNC.profile.snapshot)
    rate = SYNC.profile.snapshot.rate
    assert (sync.name, sync.observes, sync.checks, sync.stride) == (
        "sync_batch", False, "submit_response", PROMOTION_STRIDE)
    assert sync.width == min(SYNC.profile.snapshot.max_in_flight_children,
                             rate.max_active_requests, rate.max_active_remote_jobs)
    assert (bulk.name, bulk.observes, bulk.checks, bulk.stride, bulk.width) == (
        "async_bulk_job", True, "poll_response", 1, 1)


@pytest.mark.parametrize(("change", "message"), [
    ({"protocol_family": "streaming"}, "protocol family 'streaming'"),
    ({"verification": "poll_response"}, "with counters from 'poll_response'"),
])
def test_a_family_the_supervisor_cannot_drive_is_refused(change: dict[str, Any],
                                                         message: str) -> None:
    profile = SYNC.profile.snapshot
    if "verification" in change:
        change = {"verification": profile.verification.model_copy(
            update={"counters_from": change["verification"]})}
    with pytest.raises(DponeError) as refused:
        family_of(profile.model_copy(update=change))
    assert refused.value.code == "profile.unsupported_family"
    assert message in refused.value.message


def test_a_bulk_job_without_a_receipt_poll_is_refused() -> None:
    profile = ASYNC.profile.snapshot
    ack = profile.acknowledgement.model_copy(update={"poll": None})
    with pytest.raises(DponeError, match="declares no receipt poll"):
        family_of(profile.model_copy(update={"acknowledgement": ack}))


# --- the next submit move: one row per kind of exchange -----------------------------------------

def _counters(accepted: int) -> dict[str, object]:
    return {"batch_id": "b-1", "accepted_rows": accepted, "rejected_rows": 0}


def test_a_sync_answer_accounting_for_every_row_is_recorded_verified(
        sealed: dict[str, SealedChild]) -> None:
    child = sealed["sync"]
    rows = child.descriptor.row_count
    move = submit_move(SYNC, child, _answer(200, _counters(rows)), _exchange())
    assert move == Record("sync_success", {"http_status": 200, "id": "b-1",
                                           "accepted_rows": rows, "rejected_rows": 0}, None,
                          verified=True)
    short = submit_move(SYNC, child, _answer(200, _counters(rows - 1)), _exchange())
    assert isinstance(short, Record) and (short.kind, short.verified) == ("sync_success", False)


@pytest.mark.parametrize(("answer", "state", "kind"), [
    (_answer(200, {"unexpected": True}), S.SUBMITTING, "response_not_recognized"),
    (_answer(404), S.SUBMITTING, "response_not_recognized"),
    (_answer(401), S.SUBMITTING, "rejected_before_effect"),
    (_answer(403), S.SUBMITTING_FENCED_REPLAY, "response_not_recognized"),
])
def test_a_sync_answer_that_stops_the_run_is_recorded_with_its_code(
        sealed: dict[str, SealedChild], answer: Response, state: S, kind: str) -> None:
    move = submit_move(SYNC_FENCED, sealed["sync"], answer, _exchange(state))
    assert isinstance(move, Record)
    assert (move.kind, move.code, move.verified) == (kind, SUBMIT_STOPS[move.kind], False)


def test_async_answers_are_receipts_or_duplicates_proven_by_their_echo(
        sealed: dict[str, SealedChild]) -> None:
    child = sealed["async"]
    accepted = submit_move(ASYNC, child, _answer(202, {"job_id": "j-1"}), _exchange())
    assert accepted == Record("async_receipt_accepted", {"http_status": 202, "id": "j-1"}, None)
    bare = submit_move(ASYNC, child, _answer(202, {}), _exchange())
    assert isinstance(bare, Record) and (bare.kind, bare.code) == ("accepted_without_receipt",
                                                                  UNKNOWN)
    same = submit_move(ASYNC, child, _answer(409, {"job_id": "j-1",
                                                   "filename": child.request.filename}),
                       _exchange())
    assert isinstance(same, Record) and same.kind == "duplicate_receipt_same_intent"
    other = submit_move(ASYNC, child, _answer(409, {"job_id": "j-9", "filename": "other.csv.gz"}),
                        _exchange())
    assert isinstance(other, Record)
    assert (other.kind, other.code, other.values.get("duplicate_job_id")) == (
        "bare_duplicate", "REST_DELIVERY_UNSAFE_RETRY", "j-9")


def test_a_request_that_never_started_waits_within_the_budget(
        sealed: dict[str, SealedChild]) -> None:
    submit = SYNC.profile.snapshot.retry.submit
    failure = _failure(TransportPhase.NOT_STARTED)
    move = submit_move(SYNC, sealed["sync"], failure, _exchange())
    assert isinstance(move, RetryLater) and move.delay is not None
    assert 0 <= move.delay <= submit.initial_delay_s
    spent = submit_move(SYNC, sealed["sync"], failure, _exchange(elapsed_s=submit.budget_s + 1))
    last = submit_move(SYNC, sealed["sync"], failure, _exchange(attempt=submit.max_attempts))
    assert spent == last == RetryLater(None, failure)


def test_a_request_that_may_have_reached_the_receiver_is_never_resent_unfenced(
        sealed: dict[str, SealedChild]) -> None:
    failure = _failure(TransportPhase.MAY_HAVE_REACHED)
    move = submit_move(SYNC, sealed["sync"], failure, _exchange())
    assert isinstance(move, Stop)
    assert (move.step, move.code, move.shut_first, move.failure) == (
        MAY_HAVE_REACHED_UNFENCED, UNKNOWN, True, failure)
    assert move.receipt is not None
    assert (move.receipt["transport_phase"], move.receipt["transport_failure"]) == (
        "may_have_reached", "read_timeout")


def test_a_certified_fence_replays_the_same_key_until_its_budget_is_spent(
        sealed: dict[str, SealedChild]) -> None:
    submit = SYNC_FENCED.profile.snapshot.retry.submit
    failure = _failure(TransportPhase.MAY_HAVE_REACHED)
    move = submit_move(SYNC_FENCED, sealed["sync"], failure, _exchange())
    assert isinstance(move, Replay) and move.reason == failure
    exhausted = submit_move(SYNC_FENCED, sealed["sync"], failure,
                            _exchange(S.SUBMITTING_FENCED_REPLAY, attempt=submit.max_attempts))
    assert isinstance(exhausted, Stop)
    assert (exhausted.step, exhausted.code, exhausted.shut_first) == (
        REPLAY_BUDGET_EXHAUSTED, UNKNOWN, False)


def test_no_replay_later_than_the_certified_key_retention(
        sealed: dict[str, SealedChild]) -> None:
    """A certification tested the key's retention for 5 s: a replay 4 s after the first
    attempt is covered, one 6 s after it is not (the effect stays unknown)."""
    retained = SYNC_FENCED.model_copy(update={"fence": SYNC_FENCED.fence.model_copy(
        update={"certified_retention_s": 5})})
    failure = _failure(TransportPhase.MAY_HAVE_REACHED)
    covered = submit_move(retained, sealed["sync"], failure, _exchange(elapsed_s=4.0))
    assert isinstance(covered, Replay)
    late = submit_move(retained, sealed["sync"], failure, _exchange(elapsed_s=6.0))
    assert isinstance(late, Stop)
    assert (late.step, late.code) == (MAY_HAVE_REACHED_UNFENCED, UNKNOWN)


def test_a_throttle_waits_for_its_retry_after_or_stops_beyond_the_budget(
        sealed: dict[str, SealedChild]) -> None:
    budget = SYNC_FENCED.profile.snapshot.retry.submit.budget_s
    later = submit_move(SYNC_FENCED, sealed["sync"], _answer(429, **{"retry-after": "3"}),
                        _exchange())
    assert isinstance(later, Replay) and later.delay >= 3 and later.reason == 429
    beyond = submit_move(SYNC_FENCED, sealed["sync"],
                         _answer(503, **{"retry-after": str(budget + 60)}), _exchange())
    assert isinstance(beyond, Stop)
    assert (beyond.step, beyond.code, beyond.extra) == (
        THROTTLED_BEYOND_BUDGET[S.SUBMITTING], "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET",
        {"remaining_budget_s": int(budget)})
    assert beyond.receipt == {"http_status": 503, "retry_after_s": int(budget + 60)}
    unfenced = submit_move(SYNC, sealed["sync"], _answer(429), _exchange())
    assert isinstance(unfenced, Stop) and (unfenced.code, unfenced.shut_first) == (UNKNOWN, False)


# --- properties --------------------------------------------------------------------------------

STATUSES: Final = st.sampled_from([200, 202, 400, 401, 403, 404, 408, 409, 410, 425, 429, 500,
                                   502, 503, 504])
BODIES: Final = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "batch_id": st.text(max_size=4), "job_id": st.text(max_size=4),
    "accepted_rows": st.integers(-2, 5000), "rejected_rows": st.integers(-2, 5000),
    "filename": st.text(max_size=8)}))
OUTCOMES: Final = st.one_of(
    st.builds(lambda status, body, after: _answer(status, body, **(
        {"retry-after": str(after)} if after is not None else {})),
        STATUSES, BODIES, st.one_of(st.none(), st.integers(0, 400))),
    st.builds(_failure, st.sampled_from(list(TransportPhase))))


@settings(max_examples=300, deadline=None)
@given(outcome=OUTCOMES, family=st.sampled_from(["sync", "async"]), certified=st.booleans(),
       state=st.sampled_from(IN_FLIGHT), attempt=st.integers(1, 5),
       elapsed=st.floats(0, 700, allow_nan=False), seed=st.integers(0, 2**16))
def test_any_exchange_moves_only_as_the_safety_rules_allow(
        sealed_short: dict[str, SealedExample], outcome: Response | Failure, family: str,
        certified: bool, state: S, attempt: int, elapsed: float, seed: int) -> None:
    assume(certified or state == S.SUBMITTING)  # a same-key replay exists only under a fence
    plan = {("sync", False): SYNC, ("sync", True): SYNC_FENCED,
            ("async", True): ASYNC, ("async", False): _UNFENCED_ASYNC}[(family, certified)]
    child = sealed_short[family].topology.children[0]
    submit = plan.profile.snapshot.retry.submit
    move = submit_move(plan, child, outcome, Exchange(state, attempt, elapsed, NOW,
                                                      random.Random(seed)))
    if isinstance(move, Replay):
        assert certified, "a same-key replay without a certified fence"
        assert attempt < submit.max_attempts
        assert move.delay >= 0
        if isinstance(outcome, Response) and "retry-after" in outcome.headers:
            assert move.delay >= float(outcome.headers["retry-after"])
        else:
            assert move.delay <= max(submit.budget_s - elapsed, 0.0)
    elif isinstance(move, RetryLater):
        assert isinstance(outcome, Failure) and outcome.phase is TransportPhase.NOT_STARTED
        assert state == S.SUBMITTING, "a replay's failure never proves the earlier attempt"
    elif isinstance(move, Record):
        assert isinstance(outcome, Response)
        assert move.code == SUBMIT_STOPS[move.kind]
        assert not move.verified or move.kind == "sync_success"
    else:
        assert move.code in (UNKNOWN, "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET")
        assert CONTRACT.transitions[move.step.transition.value].source == state.value
        assert move.shut_first == (isinstance(outcome, Failure) and not certified)


@given(state=st.sampled_from(sorted(VERIFIED_FULL)),
       verdict=st.sampled_from(["applied", "not_applied", "partially_applied", "unknown"]))
def test_every_verdict_takes_a_step_from_the_state_it_verifies(state: S, verdict: Any) -> None:
    step, code = verification(state, verdict)
    assert SOURCE_STATES[step.transition] == state
    assert (code is None) == (verdict == "applied")
    if state == S.VERIFYING_SUCCEEDED:
        assert code != "receiver.terminal_failure", "a success never proves the absence"


@given(rows=st.integers(0, 10_000), accepted=st.integers(-5, 10_005),
       rejected=st.integers(-5, 10_005), declared=st.booleans(),
       ack=st.sampled_from(["succeeded", "failed", "cancelled", "expired"]))
def test_only_every_row_accepted_and_none_rejected_is_applied(
        rows: int, accepted: int, rejected: int, declared: bool, ack: Any) -> None:
    verdict = counter_verdict(ack, rows, accepted, rejected, rejected_declared=declared)
    counted = rejected if declared else 0
    assert (verdict == "applied") == (accepted == rows and counted == 0)
    if verdict == "not_applied":
        assert ack != "succeeded" and accepted == 0 and declared
