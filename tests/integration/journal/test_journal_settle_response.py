"""A submit answer settled in one transaction (``settle_response``), on every journal: the
answer recorded under the held mutation lease, the verification its counters prove under an
observation lease claimed inside the same transaction, and the mutation lease released. All of
it commits, or none of it does."""

from __future__ import annotations

from typing import Any

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, Lease, LeaseClaim, TransitionRequest
from dpone.journal._tx import transition as transition_tx
from support.journal import admission, submit

ANSWER = ("submitting_sync_success", ("response_recorded",))
VERIFIED = ("verifying_succeeded_verified_full", ("verification_recorded", "all_rows_accounted"))


def _requests(child: ChildOperation) -> tuple[TransitionRequest, TransitionRequest, LeaseClaim]:
    answer = TransitionRequest(operation_id=child.operation_id, transition_id=ANSWER[0],
                               expected_revision=child.revision, facts=ANSWER[1],
                               receipt={"http_status": 200, "accepted_rows": 10})
    verified = TransitionRequest(operation_id=child.operation_id, transition_id=VERIFIED[0],
                                 expected_revision=child.revision + 1, facts=VERIFIED[1])
    claim = LeaseClaim(operation_id=child.operation_id, kind="observation", holder="worker-1",
                       ttl_seconds=60)
    return answer, verified, claim


def _submitted(journal: DeliveryJournalPort) -> tuple[ChildOperation, Lease]:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    return submit(journal, operation_id)


def test_the_answer_its_verification_and_the_release_commit_together(
        journal: DeliveryJournalPort) -> None:
    child, lease = _submitted(journal)
    answer, verified, claim = _requests(child)
    answered, done = journal.settle_response(answer, lease, verification=verified,
                                             verification_lease=claim)
    assert (answered.state_name, answered.revision) == ("verifying_succeeded", child.revision + 1)
    assert (done.state_name, done.revision) == ("final_succeeded_full_eligible", child.revision + 2)
    assert done.axes.checkpoint_state == "ELIGIBLE"
    assert journal.get_child(child.operation_id) == done
    for kind in ("mutation", "observation"):  # both free the moment it commits
        assert journal.acquire_lease(child.operation_id, kind, "other", 60).holder == "other"


def test_the_verification_reads_no_row_the_answer_just_wrote(
        journal: DeliveryJournalPort, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer's CAS returns the child's row; the verification's guard runs on it (the
    same transaction holds it), so the child is read once for both (an append: a replacement's
    verification takes the effect domain's lock first and then reads the child again)."""
    operation_id = journal.admit_parent(
        admission([(0, 10)], kind="incremental_append")).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    answer, verified, claim = _requests(child)
    reads: list[str] = []
    read, opening = transition_tx.require_child, transition_tx.read_opening

    def counted(tx: Any, operation_id: str) -> Any:
        reads.append(operation_id)
        return read(tx, operation_id)

    def opened(tx: Any, operation_id: str, kind: str, **options: Any) -> Any:
        reads.append(operation_id)  # the answer's opening read: lease, environment and child
        return opening(tx, operation_id, kind, **options)

    monkeypatch.setattr(transition_tx, "require_child", counted)
    monkeypatch.setattr(transition_tx, "read_opening", opened)
    _, done = journal.settle_response(answer, lease, verification=verified,
                                      verification_lease=claim)
    assert reads == [child.operation_id]
    assert journal.get_child(child.operation_id) == done


def test_an_answer_alone_is_recorded_and_its_lease_released(journal: DeliveryJournalPort) -> None:
    child, lease = _submitted(journal)
    answer, _, _ = _requests(child)
    (answered,) = journal.settle_response(answer, lease)
    assert answered.state_name == "verifying_succeeded"
    assert journal.acquire_lease(child.operation_id, "mutation", "other", 60).holder == "other"


def test_a_refused_verification_rolls_the_answer_back(journal: DeliveryJournalPort) -> None:
    child, lease = _submitted(journal)
    answer, verified, claim = _requests(child)
    journal.acquire_lease(child.operation_id, "observation", "other", 60)
    with pytest.raises(DponeError) as held:
        journal.settle_response(answer, lease, verification=verified, verification_lease=claim)
    assert held.value.code == "journal.lease_held"
    assert journal.get_child(child.operation_id) == child  # nothing recorded
    journal.check_lease(lease)  # the mutation lease is still held: the answer can be recorded
    (answered,) = journal.settle_response(answer, lease)
    assert answered.state_name == "verifying_succeeded"


def test_a_verification_of_another_operation_is_refused(journal: DeliveryJournalPort) -> None:
    child, lease = _submitted(journal)
    answer, verified, claim = _requests(child)
    elsewhere = claim.model_copy(update={"operation_id": "op_other"})
    with pytest.raises(DponeError) as refused:
        journal.settle_response(answer, lease, verification=verified, verification_lease=elsewhere)
    assert refused.value.code == "journal.illegal_transition"
    assert journal.get_child(child.operation_id) == child
