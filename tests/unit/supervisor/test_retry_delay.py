"""How long the supervisor waits before repeating a submit or a receipt poll: a full-jitter delay
(``uniform(0, min(max_delay, initial * 2**attempt))``, the draw fixed here by ``FixedJitter``), never
earlier than the receiver's Retry-After, and inside the profile's budget: attempts and time.

The async example (mock.dataset-jobs@1) backs off submits with initial 1 s, max 30 s, 3 attempts,
a 300 s budget, and polls with initial 1 s, max 30 s, 20 attempts."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from dpone.contracts import DponeError, RemoteEffect
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted
from support.supervisor import Supervised, refuse, reply, with_profile

Make = Callable[..., Supervised]


def test_replays_wait_a_full_jitter_delay_that_doubles_per_attempt(supervised: Make) -> None:
    s = supervised("async")
    s.receiver.submits = [reply(503), reply(503)]

    result = s.run(jitter=0.5)

    assert isinstance(result, DeliveryCompleted), result
    assert s.sleeps == [0.5, 1.0]  # half of min(30, 1 * 2**0), then of min(30, 1 * 2**1)
    assert [(w.action, w.reason, w.attempt, w.max_attempts, w.delay_s) for w in s.waits] == [
        ("replay", "HTTP 503", 1, 3, 0.5), ("replay", "HTTP 503", 2, 3, 1.0)]
    assert s.outcomes(1) == [(1, "submitting_fenced_replay"), (2, "replay_again"),
                             (3, "replay_async_receipt_accepted")]


def test_the_jitter_ceiling_stops_at_the_profile_max_delay(supervised: Make) -> None:
    s = supervised("async", plan=lambda p: with_profile(
        p, retry={"submit": {"initial_delay_s": 4, "max_delay_s": 6}}))
    s.receiver.submits = [reply(503), reply(503)]

    result = s.run(jitter=1.0)

    assert isinstance(result, DeliveryCompleted), result
    assert s.sleeps == [4.0, 6.0]  # min(6, 4 * 2**0), then min(6, 4 * 2**1)


def test_our_own_jitter_never_spends_more_than_the_budget_left(supervised: Make) -> None:
    s = supervised("async", plan=lambda p: with_profile(
        p, retry={"submit": {"initial_delay_s": 30, "budget_s": 5}}))
    s.receiver.submits = [reply(503)]

    result = s.run(jitter=1.0)  # a full-jitter draw of 30 s

    assert isinstance(result, DeliveryCompleted), result
    assert len(s.sleeps) == 1 and 0 < s.sleeps[0] <= 5  # what is left of the 5 s budget


@pytest.mark.parametrize(("retry_after", "slept"), [("7", 7.0), ("0", 0.5)])
def test_a_retry_after_is_a_floor_under_the_jitter(supervised: Make, retry_after: str,
                                                   slept: float) -> None:
    s = supervised("async")
    s.receiver.submits = [reply(429, retry_after=retry_after)]

    result = s.run(jitter=0.5)

    assert isinstance(result, DeliveryCompleted), result
    assert s.sleeps == [slept]
    assert s.outcomes(1) == [(1, "submitting_fenced_replay"), (2, "replay_async_receipt_accepted")]


def test_a_retry_after_beyond_the_remaining_budget_stops_without_waiting(
        supervised: Make) -> None:
    s = supervised("async")
    budget = s.plan.profile.snapshot.retry.submit.budget_s
    s.receiver.submits = [reply(429, retry_after=str(budget + 1))]

    result = s.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET"
    assert result.remote_effect is RemoteEffect.UNKNOWN
    assert result.evidence["retry_after_s"] == budget + 1
    assert result.evidence["remaining_budget_s"] in (budget - 1, budget)  # whole seconds left
    assert s.outcomes(1) == [(1, "submitting_throttled_beyond_budget")]
    assert s.sleeps == [] and s.waits == []
    assert s.receiver.count("POST") == 1  # never retried earlier than the server asked


def test_the_submit_attempts_bound_the_replays(supervised: Make) -> None:
    s = supervised("async")
    s.receiver.submits = [reply(503)] * 3

    result = s.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert result.evidence["attempt_ordinal"] == 3
    assert s.outcomes(1) == [(1, "submitting_fenced_replay"), (2, "replay_again"),
                             (3, "replay_fence_budget_exhausted")]
    assert len(s.sleeps) == 2
    assert s.receiver.count("POST") == 3


def test_a_spent_time_budget_replays_nothing(supervised: Make) -> None:
    s = supervised("async", plan=lambda p: with_profile(p, retry={"submit": {"budget_s": 0}}))
    s.receiver.submits = [reply(503)]

    result = s.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert s.outcomes(1) == [(1, "submitting_may_have_reached_unfenced")]
    assert s.sleeps == [] and s.receiver.count("POST") == 1


def test_a_spent_time_budget_leaves_a_request_that_never_started_waiting(
        supervised: Make) -> None:
    s = supervised("sync", plan=lambda p: with_profile(p, retry={"submit": {"budget_s": 0}}))
    s.receiver.submits = [refuse]

    with pytest.raises(DponeError) as stopped:
        s.run()

    assert stopped.value.code == "receiver.unavailable"
    assert s.child(1).state_name == "retry_wait"
    assert s.outcomes(1) == [(1, "submitting_not_started_retry")]
    assert s.waits == [] and s.receiver.count("POST") == 1


def test_a_request_that_never_started_waits_its_jitter_by_the_journal_clock(
        supervised: Make) -> None:
    s = supervised("sync")
    s.receiver.submits = [refuse]

    result = s.run(jitter=0.1, sleep=time.sleep)  # the journal refuses the retry before it is due

    assert isinstance(result, DeliveryCompleted), result
    assert [(w.action, w.attempt, w.delay_s) for w in s.waits] == [("submit", 1, 0.1)]
    # At most one pause until the due time the journal recorded, never longer than the delay
    # plus the 0.05 s margin past it (none when the due time has already passed).
    assert len(s.sleeps) <= 1 and all(0 < pause <= 0.15 + 1e-9 for pause in s.sleeps)  # 0.1 + 0.05 in floats
    assert s.outcomes(1) == [(1, "submitting_not_started_retry"), (2, "submitting_sync_success")]


@pytest.mark.parametrize(("answers", "slept"), [
    (["503", "503"], [0.5, 1.0]),
    (["429:9"], [9.0]),
    (["401"], [0.5]),
], ids=["full-jitter", "retry-after", "not-about-the-job"])
def test_a_poll_without_an_answer_about_the_job_backs_off_and_records_nothing(
        supervised: Make, answers: list[str], slept: list[float]) -> None:
    s = supervised("async")
    s.receiver.polls = [reply(int(status), retry_after=after) if after else reply(int(status))
                        for status, _, after in (a.partition(":") for a in answers)]

    result = s.run(jitter=0.5)

    assert isinstance(result, DeliveryCompleted), result
    assert s.sleeps == slept
    assert {w.action for w in s.waits} == {"poll_receipt"}
    assert [w.attempt for w in s.waits] == list(range(1, len(answers) + 1))
    observations = s.journal.list_observations(s.child(1).operation_id)
    assert [o["document"]["phase"] for o in observations] == ["complete"]


def test_polls_that_never_answer_stop_unavailable_and_keep_the_receipt(supervised: Make) -> None:
    s = supervised("async", plan=lambda p: with_profile(
        p, retry={"observation": {"max_attempts": 2}}))
    s.receiver.polls = [reply(503), reply(503)]

    with pytest.raises(DponeError) as stopped:
        s.run()

    assert stopped.value.code == "receiver.unavailable"
    assert stopped.value.details == {"http_status": 503}
    assert len(s.sleeps) == 1
    assert s.child(1).state_name == "accepted" and (s.child(1).receipt or {})["id"]
