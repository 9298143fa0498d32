"""Children without rows on every journal: finalized without a request, never with rows.

A child skipped as empty input (``empty_input: skip``) holds nothing to promote and the
contiguous frontier passes over it; an append's child verified 0 of 0 (``empty_input:
promote``) is promoted with the frontier. A replacement's child without rows is never verified
without a request (replacing a window with nothing is an effect at the receiver). Any other
not-started child, with or without rows, still stops the frontier.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, ParentAdmission
from support.journal import admission, complete_full, generation, step

FACTS = ["no_request_sent", "sealed_without_rows", "frozen_read_complete"]
Finalize = Callable[[DeliveryJournalPort, ChildOperation], ChildOperation]


def _with_rows(request: ParentAdmission, rows: Sequence[int]) -> ParentAdmission:
    children = tuple(child.model_copy(update={"row_count": n})
                     for child, n in zip(request.children, rows, strict=True))
    return request.model_copy(update={"children": children})


def _skip(journal: DeliveryJournalPort, child: ChildOperation) -> ChildOperation:
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
    return step(journal, child, "sealed_empty_input_skipped", "internal", "EMPTY_INPUT_SKIPPED",
                [*FACTS, "empty_input_skip_policy"], lease)


def _verify(journal: DeliveryJournalPort, child: ChildOperation) -> ChildOperation:
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
    return step(journal, child, "sealed_empty_input_verified", "verification",
                "EMPTY_INPUT_VERIFIED",
                [*FACTS, "empty_input_promote_policy", "incremental_append_mutation"], lease)


def _refuse(journal: DeliveryJournalPort, child: ChildOperation) -> ChildOperation:
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-1", 60)
    return step(journal, child, "sealed_pre_submit_fence_refused", "admission",
                "PRE_SUBMIT_FENCE_REFUSED", ["no_request_sent"], lease,
                error_code="REST_DELIVERY_STALE_GENERATION")


def _promote(journal: DeliveryJournalPort, parent_id: str) -> int:
    lease = journal.acquire_lease(parent_id, "checkpoint", "checkpointer", 60)
    try:
        return journal.promote_frontier(parent_id, lease)
    finally:
        journal.release_lease(lease)


def test_skipped_empty_children_are_passed_over_by_the_frontier(
        journal: DeliveryJournalPort) -> None:
    request = _with_rows(admission([(0, 10), (10, 20), (20, 31)]), [0, 100, 0])
    parent = journal.admit_parent(request).parent
    first, second, third = parent.children

    skipped = _skip(journal, first)

    assert skipped.state_name == "final_not_started"
    assert (skipped.attempt_ordinal, skipped.last_error_code, skipped.receipt) == (0, None, None)
    assert skipped.empty_input == "skipped"
    assert journal.list_attempts(first.operation_id) == []
    assert _promote(journal, parent.parent_id) == 1
    complete_full(journal, second.operation_id)
    _skip(journal, third)
    assert _promote(journal, parent.parent_id) == 3
    reloaded = journal.load_parent(parent.parent_id)
    assert reloaded.checkpoint_frontier == 3
    assert [(c.state_name, c.axes.checkpoint_state) for c in reloaded.children] == [
        ("final_not_started", "BLOCKED"), ("final_succeeded_full_promoted", "PROMOTED"),
        ("final_not_started", "BLOCKED")]


def test_a_verified_empty_child_is_promoted_with_the_frontier(
        journal: DeliveryJournalPort) -> None:
    request = _with_rows(admission([(0, 10), (10, 20)], kind="incremental_append"), [0, 100])
    parent = journal.admit_parent(request).parent

    verified = _verify(journal, parent.children[0])

    assert verified.state_name == "final_not_accepted_full_eligible"
    assert verified.axes.verification_state == "PASSED"
    assert verified.empty_input == "verified"
    assert journal.list_attempts(verified.operation_id) == []
    complete_full(journal, parent.children[1].operation_id)
    assert _promote(journal, parent.parent_id) == 2
    promoted = journal.get_child(verified.operation_id)
    assert promoted.state_name == "final_not_accepted_full_promoted"
    assert promoted.empty_input == "verified"


def test_a_not_started_child_with_rows_stops_the_frontier(journal: DeliveryJournalPort) -> None:
    request = _with_rows(admission([(0, 10), (10, 20), (20, 31)]), [0, 100, 0])
    parent = journal.admit_parent(request).parent
    first, second, third = parent.children
    _skip(journal, first)
    refused = _refuse(journal, second)
    _skip(journal, third)

    assert refused.state_name == "final_not_started"
    assert refused.empty_input is None
    assert _promote(journal, parent.parent_id) == 1
    assert journal.load_parent(parent.parent_id).checkpoint_frontier == 1


def test_a_refused_child_without_rows_stops_the_frontier(journal: DeliveryJournalPort) -> None:
    request = _with_rows(admission([(0, 10), (10, 20)]), [0, 0])
    parent = journal.admit_parent(request).parent
    refused = _refuse(journal, parent.children[0])
    _skip(journal, parent.children[1])

    assert (refused.state_name, refused.row_count) == ("final_not_started", 0)
    assert refused.empty_input is None
    assert _promote(journal, parent.parent_id) == 0


@pytest.mark.parametrize("finalize", [_skip, _verify], ids=["skip", "promote"])
def test_a_child_with_rows_is_never_finalized_as_empty(journal: DeliveryJournalPort,
                                                       finalize: Finalize) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    child = parent.children[0]
    assert child.row_count == 100

    with pytest.raises(DponeError) as excinfo:
        finalize(journal, child)

    assert excinfo.value.code == "journal.illegal_transition"
    assert journal.get_child(child.operation_id) == child


def test_an_empty_replacement_is_never_verified_without_a_request(
        journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(_with_rows(admission([(0, 10)]), [0])).parent
    child = parent.children[0]
    assert (child.without_rows, parent.mutation_kind) == (True, "partition_replace")

    with pytest.raises(DponeError) as excinfo:
        _verify(journal, child)

    assert excinfo.value.code == "journal.illegal_transition"
    assert "submitted" in excinfo.value.message
    assert journal.get_child(child.operation_id) == child
    assert journal.load_parent(parent.parent_id).checkpoint_frontier == 0


def test_a_stale_empty_generation_is_never_verified(journal: DeliveryJournalPort) -> None:
    older = journal.admit_parent(
        _with_rows(admission([(0, 10)], gen=generation(10), kind="incremental_append"),
                   [0])).parent
    newer = journal.admit_parent(
        admission([(0, 20)], gen=generation(20), route="route-b")).parent
    complete_full(journal, newer.children[0].operation_id)
    child = older.children[0]

    with pytest.raises(DponeError) as excinfo:
        _verify(journal, child)

    assert excinfo.value.code == "REST_DELIVERY_STALE_GENERATION"
    assert journal.get_child(child.operation_id) == child
