"""Verification derives the remote effect from the receiver's counters against the sealed row
count: all rows accounted is FULLY_APPLIED and promoted; counters that add up short are
PARTIALLY_APPLIED with published result evidence; a failed or cancelled job that applied nothing
proves no effect; anything else (missing, mistyped or not adding up) is not provable."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dpone.contracts import RemoteEffect
from dpone.executor.supervisor import ACTIONS, DeliveryBlocked, DeliveryCompleted
from support.supervisor import Supervised, reply

Make = Callable[..., Supervised]


def _stopped(s: Supervised, code: str, state: str, effect: RemoteEffect) -> DeliveryBlocked:
    result = s.run()
    assert isinstance(result, DeliveryBlocked), result
    assert (result.code, result.remote_effect, result.checkpoint_frontier) == (code, effect, 0)
    assert result.allowed_actions == ACTIONS[code]
    child = s.child(1)
    assert (child.state_name, child.last_error_code) == (state, code)
    assert child.axes.remote_effect == effect
    assert s.journal.load_parent(child.parent_id).checkpoint_frontier == 0
    return result


@pytest.mark.parametrize("family", ["sync", "async"])
def test_every_row_accepted_is_fully_applied_and_promoted(supervised: Make, family: str) -> None:
    s = supervised(family)

    result = s.run()

    assert isinstance(result, DeliveryCompleted), result
    assert (1, "verifying_succeeded_verified_full") in s.steps
    child = s.child(1)
    assert child.state_name == "final_succeeded_full_promoted"
    assert (child.axes.remote_effect, child.axes.checkpoint_state) == (
        RemoteEffect.FULLY_APPLIED, "PROMOTED")
    assert result.checkpoint_frontier == len(s.topology.children)


@pytest.mark.parametrize(("family", "accepted"), [("sync", 500), ("sync", 0), ("async", 100)])
def test_counters_that_add_up_short_are_partially_applied(supervised: Make, family: str,
                                                          accepted: int) -> None:
    s = supervised(family)
    expected = s.topology.children[0].descriptor.row_count
    rejected = expected - accepted
    if family == "sync":
        s.receiver.submits = [reply(200, {"batch_id": "b-1", "accepted_rows": accepted,
                                          "rejected_rows": rejected})]
    else:
        s.receiver.polls = [s.receiver.job("incomplete", accepted=accepted, rejected=rejected)]

    result = _stopped(s, "REST_DELIVERY_PARTIALLY_APPLIED", "final_succeeded_partial",
                      RemoteEffect.PARTIALLY_APPLIED)

    assert (1, "verifying_succeeded_verified_partial") in s.steps
    assert result.evidence["expected_rows"] == expected
    assert (result.evidence["accepted_rows"], result.evidence["rejected_rows"]) == (accepted,
                                                                                  rejected)
    assert s.evidence(1, "result") == {
        "operation_id": s.child(1).operation_id, "acknowledgement": "succeeded",
        "expected_rows": expected, "accepted_rows": accepted, "rejected_rows": rejected}


@pytest.mark.parametrize(("phase", "acknowledged"), [("error", "failed"),
                                                     ("cancelled", "cancelled")])
def test_a_job_that_ended_without_applying_a_row_proves_no_effect(supervised: Make, phase: str,
                                                                   acknowledged: str) -> None:
    s = supervised("async")
    rows = s.topology.children[0].descriptor.row_count
    s.receiver.polls = [s.receiver.job(phase, accepted=0, rejected=rows)]

    _stopped(s, "receiver.terminal_failure", f"final_{acknowledged}_none",
             RemoteEffect.NONE_PROVEN)

    assert (1, f"verifying_{acknowledged}_no_effect") in s.steps
    assert s.receiver.count("POST") == 1  # nothing resent, the next child never submitted


@pytest.mark.parametrize("family", ["sync", "async"])
def test_a_success_that_accounts_for_too_few_rows_is_not_provable(supervised: Make,
                                                                  family: str) -> None:
    s = supervised(family)
    expected = s.topology.children[0].descriptor.row_count
    if family == "sync":
        s.receiver.submits = [reply(200, {"batch_id": "b-1", "accepted_rows": 5,
                                          "rejected_rows": 0})]
    else:
        s.receiver.polls = [s.receiver.job("complete", accepted=5)]

    result = _stopped(s, "REST_DELIVERY_COUNT_MISMATCH", "final_succeeded_unknown",
                      RemoteEffect.UNKNOWN)

    assert (1, "verifying_succeeded_not_provable") in s.steps
    assert (result.evidence["expected_rows"], result.evidence["accepted_rows"]) == (expected, 5)


@pytest.mark.parametrize("counters", ["no-accepted", "no-rejected", "zero-of-all"])
def test_a_finished_job_without_usable_counters_is_not_provable(supervised: Make,
                                                                counters: str) -> None:
    """A complete job with 0 rows accepted is not "no effect": only a failed or cancelled job
    that applied nothing proves absence."""
    s = supervised("async")
    job = s.receiver.job
    s.receiver.polls = [{"no-accepted": job("complete", accepted=None),
                         "no-rejected": job("complete", rejected=None),
                         "zero-of-all": job("complete", accepted=0, rejected=0)}[counters]]

    _stopped(s, "REST_DELIVERY_COUNT_MISMATCH", "final_succeeded_unknown",
             RemoteEffect.UNKNOWN)

    assert (1, "verifying_succeeded_not_provable") in s.steps

