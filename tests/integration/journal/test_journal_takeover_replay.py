"""The journal contract suite: the takeover of a lost submit by a certified same-key replay.

A child left in SUBMITTING by a lost run is replayed by another mutation lease only when the
parent was admitted with a certified fence and key retention, the child's first attempt is
younger than that retention by the journal clock, and attempts remain; every refusal is
``REST_DELIVERY_UNSAFE_RETRY`` before any marker, and changes nothing. ``journal`` is
parametrized over both adapters in conftest.py.
"""

from __future__ import annotations

import time

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, Lease
from dpone.journal._marker import marker_digest
from support.journal import admission, submit
from support.journal_reservations import Reservations


def _lost(journal: DeliveryJournalPort, retention: int | None, **admitted: object
          ) -> tuple[ChildOperation, Lease]:
    """A one-child delivery submitted by worker-1, whose run is then lost (its lease gone), and
    worker-2's new mutation lease on it."""
    parent = journal.admit_parent(admission([(0, 10)], replay_retention_s=retention,
                                            **admitted)).parent  # type: ignore[arg-type]
    child, lease = submit(journal, parent.children[0].operation_id)
    journal.release_lease(lease)
    return child, journal.acquire_lease(child.operation_id, "mutation", "worker-2", 60)


def _take_over(journal: DeliveryJournalPort, child: ChildOperation,
               lease: Lease) -> ChildOperation:
    plan = journal.plan_attempt(child.operation_id, lease, takeover=True)
    assert plan.takeover_age_s is not None and plan.takeover_age_s >= 0
    return journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision,
                                    fenced_replay=True)


def test_a_lost_submit_is_replayed_within_the_certified_retention(
        journal: DeliveryJournalPort, reservations: Reservations) -> None:
    child, takeover = _lost(journal, 3600)
    replayed = _take_over(journal, child, takeover)
    assert (replayed.state_name, replayed.attempt_ordinal, replayed.revision) == (
        "submitting_fenced_replay", 2, child.revision + 1)
    attempts = journal.list_attempts(child.operation_id)
    assert [a["outcome"] for a in attempts] == ["submitting_takeover_fenced_replay", None]
    assert (attempts[1]["lease_holder"], attempts[1]["lease_token"]) == (takeover.holder,
                                                                          takeover.token)
    assert reservations(child.operation_id) == {attempts[0]["attempt_id"]: "takeover_replay",
                                                attempts[1]["attempt_id"]: None}
    # The new lease now owns the attempt: it replays in-process; a third worker takes over the
    # replay once that lease is gone too.
    journal.release_lease(takeover)
    third = journal.acquire_lease(child.operation_id, "mutation", "worker-3", 60)
    again = _take_over(journal, replayed, third)
    assert (again.state_name, again.attempt_ordinal) == ("submitting_fenced_replay", 3)
    assert journal.list_attempts(child.operation_id)[1]["outcome"] == \
        "replay_takeover_fenced_replay"


@pytest.mark.parametrize(("retention", "admitted", "why"), [
    (None, {}, "without a certified key retention"),
    (3600, {"replay_fence_certified": False}, "without a certified key retention"),
    (0, {}, "beyond the 0 s"),
    (3600, {"max_submit_attempts": 1}, "exceeds the 1 submit attempt"),
], ids=["no-retention", "fence-not-certified", "retention-too-short", "attempts-spent"])
def test_a_takeover_outside_the_certified_fence_is_refused_before_any_marker(
        journal: DeliveryJournalPort, reservations: Reservations, retention: int | None,
        admitted: dict[str, object], why: str) -> None:
    child, takeover = _lost(journal, retention, **admitted)
    before = reservations(child.operation_id)
    time.sleep(0.02)  # the first attempt is older than 0 s on either clock's resolution
    with pytest.raises(DponeError) as refused:
        journal.plan_attempt(child.operation_id, takeover, takeover=True)
    assert refused.value.code == "REST_DELIVERY_UNSAFE_RETRY"
    assert why in refused.value.message
    assert journal.get_child(child.operation_id) == child
    assert [a["outcome"] for a in journal.list_attempts(child.operation_id)] == [None]
    assert reservations(child.operation_id) == before


def test_only_another_lease_takes_over_and_only_a_lost_submit(
        journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10), (10, 20)], replay_retention_s=3600)).parent
    first, second = (c.operation_id for c in parent.children)
    child, lease = submit(journal, first)
    with pytest.raises(DponeError) as own:
        journal.plan_attempt(first, lease, takeover=True)
    assert own.value.code == "journal.illegal_transition"
    sealed = journal.acquire_lease(second, "mutation", "worker-2", 60)
    with pytest.raises(DponeError) as not_in_flight:
        journal.plan_attempt(second, sealed, takeover=True)
    assert not_in_flight.value.code == "journal.illegal_transition"
    # An attempt planned in-process is no takeover: worker-2 cannot enter it.
    journal.release_lease(lease)
    takeover = journal.acquire_lease(first, "mutation", "worker-2", 60)
    with pytest.raises(DponeError) as in_process:
        journal.plan_attempt(first, takeover)
    assert in_process.value.code == "journal.lease_lost"
    assert journal.get_child(first) == child
