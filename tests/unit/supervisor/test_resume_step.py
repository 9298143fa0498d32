"""Where a child stands after each kind of stop, as the journal holds it: what resuming does with
it next (``resume_step``), what an operator may do (``allowed_actions``) and the status of the
whole delivery (``delivery_status``), the same from the children and from the listing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dpone.executor.supervisor import (
    ACTIONS,
    DeliveryBlocked,
    DeliveryCompleted,
    DeliveryPending,
    allowed_actions,
    delivery_status,
    parent_admission,
    resume_step,
)
from support.supervisor import (
    Supervised,
    WorkerLost,
    drop,
    reply,
    uncertified,
    with_profile,
)

Make = Callable[..., Supervised]
UNKNOWN = "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"


def _admitted(s: Supervised) -> None:
    s.journal.admit_parent(parent_admission(s.plan, s.topology))


def _stopped_after(transition_id: str) -> Callable[[Supervised], None]:
    def run(s: Supervised) -> None:
        with pytest.raises(WorkerLost):
            s.run(stop_after=transition_id)

    return run


def _rejected(s: Supervised) -> None:
    s.receiver.submits = [reply(401)]
    assert isinstance(s.run(), DeliveryBlocked)


def _unknown(s: Supervised) -> None:
    s.receiver.submits = [drop]
    assert isinstance(s.run(), DeliveryBlocked)


def _partial(s: Supervised) -> None:
    s.receiver.polls = [s.receiver.job("incomplete", accepted=10, rejected=180)]
    assert isinstance(s.run(), DeliveryBlocked)


def _completed(s: Supervised) -> None:
    assert isinstance(s.run(), DeliveryCompleted)


# scenario -> (how child 1 gets there, its state, resume step, allowed actions, delivery status)
SCENARIOS = {
    "admitted": (_admitted, "sealed", "submit", ("resume_delivery",), "in_progress"),
    "on-the-wire": (_stopped_after("enter_submitting"), "submitting", "take_over_unknown",
                    ("wait_for_mutation_lease", "reconcile_delivery_key", "inspect_evidence"),
                    "in_progress"),
    "receipt-durable": (_stopped_after("submitting_async_receipt_accepted"), "accepted",
                        "poll_receipt", ("poll_receipt",), "pending"),
    "counters-recorded": (_stopped_after("accepted_poll_succeeded"), "verifying_succeeded",
                          "verify_counters", ("verify_counters",), "in_progress"),
    "verified-not-promoted": (_stopped_after("verifying_succeeded_verified_full"),
                              "final_succeeded_full_eligible", "promote_checkpoint",
                              ("promote_checkpoint",), "in_progress"),
    "credential-rejected": (_rejected, "retry_wait", "submit", ("resume_delivery",),
                            "blocked"),  # it waits for the operator to fix the credential
    "effect-unknown": (_unknown, "final_not_accepted_unknown_unverified", "stop", ACTIONS[UNKNOWN],
                       "blocked"),
    "partially-applied": (_partial, "final_succeeded_partial", "stop",
                          ACTIONS["REST_DELIVERY_PARTIALLY_APPLIED"], "blocked"),
    "completed": (_completed, "final_succeeded_full_promoted", "none", (), "completed"),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_each_stop_names_the_next_step_the_actions_and_the_status(supervised: Make,
                                                                  scenario: str) -> None:
    reach, state, step, actions, status = SCENARIOS[scenario]
    s = supervised("async", plan=uncertified if scenario == "effect-unknown" else None)
    reach(s)

    child = s.child(1)
    assert (child.state_name, resume_step(child), allowed_actions(child)) == (state, step, actions)
    assert delivery_status(s.children()) == status
    listed = s.journal.list_deliveries(1)[0]
    assert delivery_status(listed.standings) == status
    first = next(standing for standing in listed.standings if standing.first_ordinal == 1)
    assert (resume_step(first), allowed_actions(first)) == (step, actions)


def test_a_child_left_on_the_wire_is_taken_over_as_unknown_and_never_resent(
        supervised: Make) -> None:
    s = supervised("sync")
    with pytest.raises(WorkerLost):
        s.run(stop_after="enter_submitting")
    sent = s.receiver.count("POST")

    result = s.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == UNKNOWN
    assert (1, "submitting_mutation_lease_lost") in s.steps
    assert s.receiver.count("POST") == sent == 0  # stopped before its one send
    assert (resume_step(s.child(1)), delivery_status(s.children())) == ("stop", "blocked")


def test_without_wait_a_receipt_not_yet_due_is_pending_and_nothing_is_polled(
        supervised: Make) -> None:
    s = supervised("async", plan=lambda p: with_profile(p, timeouts={"poll_interval_s": 60}))

    result = s.run(wait=False)

    assert isinstance(result, DeliveryPending), result
    assert (result.continuation_kind, result.ordinal, result.state_name) == (
        "poll_receipt", 1, "accepted")
    assert result.receipt["id"] == "job-000001"
    assert result.next_check_after == s.child(1).next_check_after
    assert [r.method for r in s.receiver.requests] == ["POST"]
    assert (resume_step(s.child(1)), delivery_status(s.children())) == ("poll_receipt", "pending")


def test_a_blocked_run_and_the_journal_agree_on_the_next_actions(supervised: Make) -> None:
    s = supervised("async")
    s.receiver.submits = [reply(409, {})]

    result = s.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.allowed_actions == allowed_actions(s.child(1)) == ACTIONS[result.code]
    assert (resume_step(s.child(1)), delivery_status(s.children())) == ("stop", "blocked")
