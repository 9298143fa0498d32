"""The operator reconciliation transaction on every journal: operator lease, revision CAS,
capacity, audit, and the same-key resubmit it allows after a proven absence."""

from __future__ import annotations

import pytest

from dpone.contracts import DponeError, content_digest
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, ReconcileRequest
from support.journal import admission, step, submit
from support.journal_reservations import Reservations

FULL = ("reconcile_open_not_accepted_unknown_unverified", "reconcile_not_accepted_unknown_to_full")
NONE = ("reconcile_open_not_accepted_unknown_unverified", "reconcile_not_accepted_unknown_to_none")
RUNNING = ("reconcile_open_not_accepted_unknown_unverified",
           "reconcile_not_accepted_unknown_to_running")
RESOLVE_FACTS = ("operator_authority_audited", "read_only_receiver_evidence")


def _unknown(journal: DeliveryJournalPort, *, max_remote_jobs: int = 1) -> ChildOperation:
    """A child whose request may have reached the receiver without a fence: UNKNOWN."""
    parent = journal.admit_parent(admission([(0, 10), (10, 20)],
                                            max_remote_jobs=max_remote_jobs)).parent
    child, lease = submit(journal, parent.children[0].operation_id)
    unknown = step(journal, child, "submitting_may_have_reached_unfenced", "transport",
                   "REQUEST_MAY_HAVE_REACHED_RECEIVER", ["no_certified_fence"], lease)
    journal.release_lease(lease)  # the worker that submitted has finished
    return unknown


def _request(child: ChildOperation, transitions: tuple[str, str], *, revision: int | None = None,
             evidence: str = "evidence-1", facts: tuple[str, ...] = RESOLVE_FACTS,
             **fields: object) -> ReconcileRequest:
    return ReconcileRequest(
        operation_id=child.operation_id,
        expected_revision=child.revision if revision is None else revision,
        open_transition_id=transitions[0], resolve_transition_id=transitions[1], facts=facts,
        reconciliation_id=f"rec-{evidence}", evidence_digest=content_digest(evidence.encode()),
        actor="ops@example.test", audit={"proof": "operator_evidence"},
        **fields)  # type: ignore[arg-type]


def test_applied_is_recorded_under_the_operator_lease_and_releases_the_slot(
        journal: DeliveryJournalPort, reservations: Reservations) -> None:
    child = _unknown(journal)
    assert set(reservations(child.operation_id).values()) == {None}  # UNKNOWN keeps the slot
    lease = journal.acquire_lease(child.operation_id, "operator", "ops", 60)

    done = journal.reconcile(_request(child, FULL), lease)

    assert done.state_name == "final_not_accepted_full_eligible"
    assert done.revision == child.revision + 2 and done.last_error_code is None
    assert set(reservations(child.operation_id).values()) == {FULL[1]}
    second = journal.load_parent(child.parent_id).children[1]
    assert submit(journal, second.operation_id)[0].state_name == "submitting"  # the slot is free


def test_a_stale_revision_or_a_missing_lease_changes_nothing(
        journal: DeliveryJournalPort, reservations: Reservations) -> None:
    child = _unknown(journal)
    mutation = journal.acquire_lease(child.operation_id, "mutation", "worker-2", 60)
    with pytest.raises(DponeError) as wrong_lease:
        journal.reconcile(_request(child, FULL), mutation)
    lease = journal.acquire_lease(child.operation_id, "operator", "ops", 60)
    journal.release_lease(lease)
    with pytest.raises(DponeError) as released:
        journal.reconcile(_request(child, FULL), lease)
    live = journal.acquire_lease(child.operation_id, "operator", "ops", 60)
    with pytest.raises(DponeError) as stale:
        journal.reconcile(_request(child, FULL, revision=child.revision - 1), live)
    with pytest.raises(DponeError) as unproven:
        journal.reconcile(_request(child, FULL, facts=("operator_authority_audited",)), live)

    assert wrong_lease.value.code == released.value.code == "journal.lease_lost"
    assert stale.value.code == "journal.revision_conflict"
    assert unproven.value.code == "journal.illegal_transition"
    assert journal.get_child(child.operation_id) == child
    assert set(reservations(child.operation_id).values()) == {None}


def test_the_same_evidence_is_never_recorded_twice(journal: DeliveryJournalPort) -> None:
    child = _unknown(journal)
    lease = journal.acquire_lease(child.operation_id, "operator", "ops", 60)
    still = journal.reconcile(_request(child, (
        "reconcile_open_not_accepted_unknown_unverified",
        "reconcile_not_accepted_unknown_to_unknown")), lease)
    assert still.state_name == "final_not_accepted_unknown"
    with pytest.raises(DponeError) as reused:
        journal.reconcile(_request(still, ("reconcile_open_not_accepted_unknown",
                                           "reconcile_not_accepted_unknown_to_full")), lease)
    assert reused.value.code == "journal.illegal_transition"
    assert journal.get_child(child.operation_id) == still


def test_a_running_receipt_keeps_the_slot_and_is_observed(
        journal: DeliveryJournalPort, reservations: Reservations) -> None:
    child = _unknown(journal)
    lease = journal.acquire_lease(child.operation_id, "operator", "ops", 60)

    running = journal.reconcile(_request(
        child, RUNNING, facts=(*RESOLVE_FACTS, "receipt_persisted"),
        receipt={"id": "job-1", "phase": "running"}, next_check_after=journal.now()), lease)

    assert running.state_name == "waiting" and running.receipt == {"id": "job-1",
                                                                   "phase": "running"}
    assert set(reservations(child.operation_id).values()) == {None}


def test_proven_absence_resubmits_the_same_key_but_verified_absence_does_not(
        journal: DeliveryJournalPort, reservations: Reservations) -> None:
    child = _unknown(journal, max_remote_jobs=2)
    lease = journal.acquire_lease(child.operation_id, "operator", "ops", 60)
    absent = journal.reconcile(_request(child, NONE), lease)
    journal.release_lease(lease)
    assert absent.state_name == "final_not_accepted_none"
    assert set(reservations(child.operation_id).values()) == {NONE[1]}

    again, _lease = submit(journal, child.operation_id, holder="worker-9")

    assert (again.state_name, again.attempt_ordinal) == ("submitting", 2)
    assert again.delivery_key == child.delivery_key
    assert len([r for r in reservations(child.operation_id).values() if r is None]) == 1
    second = journal.load_parent(child.parent_id).children[1].operation_id
    rejected, worker = submit(journal, second)
    rejected = step(journal, rejected, "submitting_sync_rejected", "submit_response",
                    "SYNC_CERTIFIED_REJECTION", ["response_recorded"], worker)
    journal.release_lease(worker)
    observer = journal.acquire_lease(second, "observation", "verifier", 60)
    failed = step(journal, rejected, "verifying_failed_no_effect", "verification",
                  "NO_EFFECT_VERIFIED", ["verification_recorded", "absence_proven"], observer)
    assert failed.state_name == "final_failed_none"  # by automatic verification: not enough
    with pytest.raises(DponeError) as refused:
        submit(journal, failed.operation_id)
    assert refused.value.code == "journal.illegal_transition"
    assert journal.get_child(failed.operation_id) == failed
