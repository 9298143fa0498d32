"""How each submit answer moves a child, over ``httpx.MockTransport`` and a SQLite journal: a sync
batch with counters, an async receipt, a duplicate with or without a same-key receipt, a
throttle with and without the certified fence, a certified refusal before effect, an answer the
profile does not recognize, a request that never started and one that may have reached."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dpone.contracts import DponeError, RemoteEffect
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.supervisor import ACTIONS, DeliveryBlocked, DeliveryCompleted, DeliveryResult
from support.supervisor import (
    Supervised,
    drop,
    refuse,
    reply,
    uncertified,
    with_profile,
)

Make = Callable[..., Supervised]
UNKNOWN_STATE = "final_not_accepted_unknown_unverified"


def _blocked(s: Supervised, result: DeliveryResult, code: str) -> DeliveryBlocked:
    """Stopped on child 1 with ``code``: the frontier at 0, the next child never touched, and the
    result's next actions the ones the journal's child allows."""
    assert isinstance(result, DeliveryBlocked), result
    assert result.code == code
    assert result.checkpoint_frontier == 0
    child = s.child(1)
    assert (result.operation_id, result.evidence["state_name"]) == (child.operation_id,
                                                                     child.state_name)
    assert child.last_error_code == code
    assert result.allowed_actions == ACTIONS[code]
    assert [c.state_name for c in s.children()[1:]] == ["sealed"] * (len(s.topology.children) - 1)
    return result


def _rerun_sends_nothing(s: Supervised, code: str) -> None:
    sent = len(s.receiver.requests)
    again = s.run()
    assert isinstance(again, DeliveryBlocked) and again.code == code, again
    assert len(s.receiver.requests) == sent


def test_a_sync_batch_with_counters_succeeds_and_is_verified_from_them(supervised: Make) -> None:
    s = supervised("sync")
    rows = s.topology.children[0].descriptor.row_count

    result = s.run()

    assert isinstance(result, DeliveryCompleted), result
    assert s.steps == [(1, "enter_submitting"), (1, "submitting_sync_success"),
                       (1, "verifying_succeeded_verified_full")]
    assert result.children[0].receipt == {"http_status": 200, "id": "b-1", "accepted_rows": rows,
                                          "rejected_rows": 0}
    assert s.evidence(1, "submit-response")["outcome"] == "sync_success"
    assert s.receiver.count("POST") == 1
    assert s.receiver.requests[0].headers["X-Delivery-Key"] == s.child(1).delivery_key


def test_an_async_receipt_is_observed_until_its_job_completes(supervised: Make) -> None:
    s = supervised("async")
    s.receiver.polls = [s.receiver.job("running"), s.receiver.job("pending")]

    result = s.run()

    assert isinstance(result, DeliveryCompleted), result
    assert [step for ordinal, step in s.steps if ordinal == 1] == [
        "enter_submitting", "submitting_async_receipt_accepted", "accepted_poll_running",
        "waiting_poll_running", "waiting_poll_succeeded", "verifying_succeeded_verified_full"]
    assert result.children[0].receipt["id"] == "job-000001"
    assert [r.method for r in s.receiver.requests] == ["POST", "GET", "GET", "GET", "POST", "GET"]
    assert s.sleeps == []  # a poll interval of 0: every check is due at once


def test_a_duplicate_with_a_same_key_receipt_resumes_observation(supervised: Make) -> None:
    s = supervised("async")
    filename = s.topology.children[0].request.filename or ""
    s.receiver.jobs["job-earlier"] = filename
    s.receiver.submits = [reply(409, {"job_id": "job-earlier", "filename": filename})]

    result = s.run()

    assert isinstance(result, DeliveryCompleted), result
    assert s.outcomes(1) == [(1, "submitting_duplicate_receipt_same_intent")]
    assert result.children[0].receipt["id"] == "job-earlier"
    assert str(s.receiver.requests[1].url).endswith("/dataset-jobs/job-earlier")
    assert s.receiver.count("POST") == 2  # child 1 once, child 2


@pytest.mark.parametrize("answer", ["another-file", "no-id", "empty"])
def test_a_duplicate_without_a_same_key_receipt_is_an_unsafe_retry(supervised: Make,
                                                                   answer: str) -> None:
    """(A job id without any echo is adopted under the example's certified, payload-bound
    fence: ``test_duplicate_adoption.py``.)"""
    s = supervised("async")
    ours = s.topology.children[0].request.filename
    body = {"another-file": {"job_id": "job-other", "filename": "7b" * 32 + ".csv.gz"},
            "no-id": {"filename": ours}, "empty": {}}[answer]
    s.receiver.submits = [reply(409, body)]

    result = s.run()

    blocked = _blocked(s, result, "REST_DELIVERY_UNSAFE_RETRY")
    assert blocked.remote_effect is RemoteEffect.UNKNOWN
    assert blocked.evidence["http_status"] == 409
    assert s.outcomes(1) == [(1, "submitting_bare_duplicate")]
    # Nothing of an unproven receipt is kept as the child's receipt; a job the answer named
    # is kept apart, for the operator's reconcile of it.
    named = {"duplicate_job_id": "job-other"} if answer == "another-file" else {}
    assert s.child(1).receipt == {"http_status": 409, **named}
    _rerun_sends_nothing(s, "REST_DELIVERY_UNSAFE_RETRY")


def _receipt_id_optional(plan: RestDeliveryPlan) -> RestDeliveryPlan:
    """``plan`` whose profile reads a duplicate's receipt id as optional."""
    ack = plan.profile.snapshot.acknowledgement
    assert ack.duplicate is not None
    extractors = dict(ack.duplicate.same_key_receipt)
    extractors["id"] = extractors["id"].model_copy(update={"required": False})
    duplicate = ack.duplicate.model_copy(update={"same_key_receipt": extractors})
    return with_profile(plan, acknowledgement={"duplicate": duplicate})


def test_a_same_key_receipt_without_an_id_proves_nothing_even_when_the_id_is_optional(
        supervised: Make) -> None:
    s = supervised("async", plan=_receipt_id_optional)
    s.receiver.submits = [reply(409, {"filename": s.topology.children[0].request.filename})]

    result = s.run()

    _blocked(s, result, "REST_DELIVERY_UNSAFE_RETRY")
    assert s.outcomes(1) == [(1, "submitting_bare_duplicate")]


def test_a_conflict_on_a_profile_without_duplicate_receipts_is_not_recognized(
        supervised: Make) -> None:
    s = supervised("sync")
    s.receiver.submits = [reply(409, {"batch_id": "b-1"})]

    result = s.run()

    blocked = _blocked(s, result, "REST_DELIVERY_PROTOCOL_UNKNOWN")
    assert blocked.remote_effect is RemoteEffect.UNKNOWN
    assert s.outcomes(1) == [(1, "submitting_response_not_recognized")]


@pytest.mark.parametrize("status", [408, 425, 429, 500, 503])
def test_a_throttle_without_a_certified_fence_is_unknown_and_never_resent(
        supervised: Make, status: int) -> None:
    s = supervised("sync")
    assert s.plan.fence.type == "none"
    s.receiver.submits = [reply(status, retry_after="1")]

    result = s.run()

    blocked = _blocked(s, result, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")
    assert blocked.remote_effect is RemoteEffect.UNKNOWN
    assert (blocked.evidence["http_status"], blocked.evidence["retry_after_s"]) == (status, 1)
    assert s.outcomes(1) == [(1, "submitting_may_have_reached_unfenced")]
    assert s.sleeps == [] and s.waits == []
    _rerun_sends_nothing(s, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")


def test_a_throttle_under_the_certified_fence_is_replayed_with_the_same_key(
        supervised: Make) -> None:
    s = supervised("async")
    assert s.plan.fence.type == "receiver_duplicate_key" and s.plan.fence.certified_in_environment
    s.receiver.submits = [reply(503)]

    result = s.run()

    assert isinstance(result, DeliveryCompleted), result
    assert s.outcomes(1) == [(1, "submitting_fenced_replay"), (2, "replay_async_receipt_accepted")]
    first, replayed = (s.receiver.filename(r) for r in s.receiver.requests[:2])
    assert first == replayed == s.topology.children[0].request.filename
    assert [(w.action, w.reason, w.attempt) for w in s.waits] == [("replay", "HTTP 503", 1)]
    assert len(s.sleeps) == 1


@pytest.mark.parametrize("family", ["sync", "async"])
@pytest.mark.parametrize("status", [401, 403])
def test_a_certified_refusal_waits_for_the_credential_then_resubmits_the_same_key(
        supervised: Make, family: str, status: int) -> None:
    s = supervised(family)
    s.receiver.submits = [reply(status)]

    result = s.run()

    blocked = _blocked(s, result, "credential.rejected")
    assert blocked.remote_effect is RemoteEffect.NONE_PROVEN
    assert blocked.evidence["credential_ref"] == s.plan.binding.snapshot.credential_ref
    assert s.child(1).state_name == "retry_wait"
    assert s.outcomes(1) == [(1, "submitting_rejected_before_effect")]

    again = s.run()

    assert isinstance(again, DeliveryCompleted), again
    assert again.children[0].attempt_ordinal == 2
    keys = {r.headers.get("X-Delivery-Key") or s.receiver.filename(r)
            for r in s.receiver.requests[:2]}
    assert len(keys) == 1  # the same delivery key, a new attempt


def test_a_refusal_to_a_same_key_replay_proves_nothing_of_the_earlier_attempt(
        supervised: Make) -> None:
    s = supervised("async")
    s.receiver.submits = [reply(503), reply(401)]

    result = s.run()

    blocked = _blocked(s, result, "REST_DELIVERY_PROTOCOL_UNKNOWN")
    assert blocked.remote_effect is RemoteEffect.UNKNOWN
    assert s.outcomes(1) == [(1, "submitting_fenced_replay"), (2, "replay_response_not_recognized")]


@pytest.mark.parametrize(("family", "status", "body", "code"), [
    ("async", 202, {}, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"),
    ("async", 202, {"job_id": None}, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"),
    ("sync", 200, {"batch_id": "b-1"}, "REST_DELIVERY_PROTOCOL_UNKNOWN"),
    ("sync", 200, {"batch_id": "b-1", "accepted_rows": "all"}, "REST_DELIVERY_PROTOCOL_UNKNOWN"),
    ("sync", 404, {}, "REST_DELIVERY_PROTOCOL_UNKNOWN"),
], ids=["job-without-id", "job-id-null", "batch-without-counters", "batch-counter-not-int",
        "not-found"])
def test_an_acceptance_the_profile_cannot_read_is_never_a_success(
        supervised: Make, family: str, status: int, body: dict[str, object], code: str) -> None:
    s = supervised(family)
    s.receiver.submits = [reply(status, body)]

    result = s.run()

    blocked = _blocked(s, result, code)
    assert blocked.remote_effect is RemoteEffect.UNKNOWN
    outcome = {"REST_DELIVERY_REMOTE_EFFECT_UNKNOWN": "submitting_accepted_without_receipt",
               "REST_DELIVERY_PROTOCOL_UNKNOWN": "submitting_response_not_recognized"}[code]
    assert s.outcomes(1) == [(1, outcome)]
    assert s.child(1).receipt == {"http_status": status}
    _rerun_sends_nothing(s, code)


@pytest.mark.parametrize("family", ["sync", "async"])
def test_a_request_that_never_started_is_retried_as_a_new_attempt(supervised: Make,
                                                                  family: str) -> None:
    s = supervised(family)
    s.receiver.submits = [refuse]

    result = s.run(jitter=0.0)  # a due time of now: the journal lets the retry go at once

    assert isinstance(result, DeliveryCompleted), result
    first = {"sync": "submitting_sync_success", "async": "submitting_async_receipt_accepted"}
    assert s.outcomes(1) == [(1, "submitting_not_started_retry"), (2, first[family])]
    assert [(w.action, w.attempt, w.delay_s) for w in s.waits] == [("submit", 1, 0.0)]
    assert s.waits[0].reason.startswith("connect: ")
    assert s.receiver.count("POST") == len(s.topology.children) + 1


@pytest.mark.parametrize("family", ["sync", "async"])
def test_a_request_that_may_have_reached_without_a_certified_fence_is_unknown(
        supervised: Make, family: str) -> None:
    s = supervised(family, plan=uncertified)
    s.receiver.submits = [drop]

    result = s.run()

    blocked = _blocked(s, result, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")
    assert blocked.remote_effect is RemoteEffect.UNKNOWN
    assert blocked.evidence["state_name"] == UNKNOWN_STATE
    assert (blocked.evidence["transport_phase"], blocked.evidence["transport_failure"]) == (
        "may_have_reached", "read_timeout")
    assert s.outcomes(1) == [(1, "submitting_may_have_reached_unfenced")]
    assert s.sleeps == []
    _rerun_sends_nothing(s, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")


def test_a_run_whose_requests_never_start_stops_unavailable_and_waits_in_retry_wait(
        supervised: Make) -> None:
    s = supervised("sync", plan=lambda p: with_profile(p, retry={"submit": {"max_attempts": 2}}))
    s.receiver.submits = [refuse, refuse]

    with pytest.raises(DponeError) as stopped:
        s.run(jitter=0.0)

    assert stopped.value.code == "receiver.unavailable"
    assert stopped.value.operation_id == s.child(1).operation_id
    assert stopped.value.details == {"transport_phase": "not_started",
                                     "transport_failure": "connect"}
    assert s.child(1).state_name == "retry_wait"
    assert s.child(1).axes.remote_effect == RemoteEffect.NONE_PROVEN
    assert s.outcomes(1) == [(1, "submitting_not_started_retry"),
                             (2, "submitting_not_started_retry")]
