"""The read-only delivery listing: every adapter returns the newest deliveries first, bounded,
with each delivery's children grouped by state, and the supervisor's state groups derive one
status per delivery from it."""

from __future__ import annotations

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import DeliveryJournalPort
from dpone.executor.supervisor import delivery_status
from support.journal import admission, complete_failed, complete_full, step, submit


def test_an_empty_journal_lists_nothing(journal: DeliveryJournalPort) -> None:
    assert list(journal.list_deliveries(100)) == []


def test_deliveries_are_listed_newest_first_with_children_grouped_by_state(
        journal: DeliveryJournalPort) -> None:
    first = journal.admit_parent(admission([(0, 10), (10, 20), (20, 31)])).parent
    second = journal.admit_parent(admission([(40, 50)], route="route-b")).parent
    third = journal.admit_parent(admission([(60, 70), (70, 80)], route="route-c")).parent
    complete_full(journal, first.children[1].operation_id)

    listed = journal.list_deliveries(100)

    assert [d.parent_id for d in listed] == [third.parent_id, second.parent_id, first.parent_id]
    oldest = listed[2]
    assert (oldest.logical_route_id, oldest.boundary_from, oldest.boundary_to) == (
        "route-a", first.boundary_from, first.boundary_to)
    assert (oldest.children_total, oldest.checkpoint_frontier) == (3, 0)
    assert [(s.state_name, s.children, s.first_ordinal) for s in oldest.standings] == [
        ("sealed", 2, 1), ("final_succeeded_full_eligible", 1, 2)]
    assert oldest.standings[1].axes.remote_effect == "FULLY_APPLIED"
    assert listed[0].admitted_at >= listed[1].admitted_at >= listed[2].admitted_at
    assert all(d.admitted_at <= journal.now() for d in listed)


def test_the_listing_is_bounded_by_the_limit(journal: DeliveryJournalPort) -> None:
    admitted = [journal.admit_parent(admission([(10 * n, 10 * n + 5)], route=f"route-{n}")).parent
                for n in range(4)]

    assert [d.parent_id for d in journal.list_deliveries(2)] == [
        admitted[3].parent_id, admitted[2].parent_id]
    for limit in (0, 10_001):
        with pytest.raises(DponeError) as excinfo:
            journal.list_deliveries(limit)
        assert excinfo.value.code == "input.invalid_argument"


def test_each_listed_delivery_has_the_status_a_resume_would_find(
        journal: DeliveryJournalPort) -> None:
    done = journal.admit_parent(admission([(0, 10)])).parent
    complete_full(journal, done.children[0].operation_id)
    lease = journal.acquire_lease(done.parent_id, "checkpoint", "checkpointer", 60)
    assert journal.promote_frontier(done.parent_id, lease) == 1
    blocked = journal.admit_parent(admission([(20, 30), (30, 40)], route="route-b")).parent
    complete_failed(journal, blocked.children[0].operation_id)
    waiting = journal.admit_parent(admission([(50, 60), (60, 70)], route="route-c")).parent
    child, mutation = submit(journal, waiting.children[0].operation_id)
    step(journal, child, "submitting_async_receipt_accepted", "submit_response",
         "ASYNC_RECEIPT_PERSISTED", ["receipt_persisted"], mutation, receipt={"id": "job-1"})
    in_flight = journal.admit_parent(admission([(80, 90)], route="route-d")).parent
    submit(journal, in_flight.children[0].operation_id)
    fresh = journal.admit_parent(admission([(100, 110)], route="route-e")).parent

    statuses = {d.parent_id: delivery_status(d.standings) for d in journal.list_deliveries(10)}

    assert statuses == {done.parent_id: "completed", blocked.parent_id: "blocked",
                        waiting.parent_id: "pending", in_flight.parent_id: "in_progress",
                        fresh.parent_id: "in_progress"}
    for parent_id, status in statuses.items():
        assert delivery_status(journal.load_parent(parent_id).children) == status
