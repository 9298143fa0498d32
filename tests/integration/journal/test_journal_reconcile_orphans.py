"""Orphan MAY_ATTEMPT markers and the operator reconciliation, on every journal.

A run lost between publishing an attempt's marker and its SUBMITTING transaction leaves a marker
at an ordinal above the journal's ``attempt_ordinal``. The reconciliation that proves the
delivery key's effect covers it: the journal consumes each orphan's ordinal (an attempt row with
its marker key and digest, never a capacity reservation), so a child proven not applied is
resubmitted at a fresh ordinal. The journal verifies what it is told: the orphans are exactly
``attempt_ordinal + 1 ..`` contiguous, under their attempts' marker keys, and none has an attempt
row. A marker that appears only after the reconciliation is met at the resubmit and recorded as
an UNKNOWN effect (``final_*_none_orphan_marker_found``).
"""

from __future__ import annotations

import pytest

from dpone.contracts import DponeError, content_digest
from dpone.contracts.journal import (
    ChildOperation,
    DeliveryJournalPort,
    OrphanMarker,
    ReconcileRequest,
    may_attempt_marker_key,
)
from dpone.journal._marker import marker_digest
from support.journal import admission, step, submit
from support.journal_reservations import Reservations

NONE = ("reconcile_open_not_accepted_unknown_unverified", "reconcile_not_accepted_unknown_to_none")
CONSUMED = "reconcile_not_accepted_unknown_orphan_consumed"
RESOLVE_FACTS = ("operator_authority_audited", "read_only_receiver_evidence")


def _unknown(journal: DeliveryJournalPort) -> ChildOperation:
    """Child 1 of two (one remote-job slot): its first attempt may have reached the receiver."""
    parent = journal.admit_parent(admission([(0, 10), (10, 20)], max_remote_jobs=1)).parent
    child, lease = submit(journal, parent.children[0].operation_id)
    unknown = step(journal, child, "submitting_may_have_reached_unfenced", "transport",
                   "REQUEST_MAY_HAVE_REACHED_RECEIVER", ["no_certified_fence"], lease)
    journal.release_lease(lease)
    return unknown


def _orphan(child: ChildOperation, ordinal: int, *, key_ordinal: int | None = None) -> OrphanMarker:
    key = may_attempt_marker_key(child.tenancy.operation_namespace, child.operation_id,
                                 ordinal if key_ordinal is None else key_ordinal)
    return OrphanMarker(attempt_ordinal=ordinal, marker_key=key,
                        marker_digest=content_digest(f"orphan-{ordinal}".encode()))


def _reconcile(journal: DeliveryJournalPort, child: ChildOperation,
               orphans: tuple[OrphanMarker, ...], evidence: str = "absent") -> ChildOperation:
    lease = journal.acquire_lease(child.operation_id, "operator", "ops", 60)
    try:
        return journal.reconcile(ReconcileRequest(
            operation_id=child.operation_id, expected_revision=child.revision,
            open_transition_id=NONE[0], resolve_transition_id=NONE[1], facts=RESOLVE_FACTS,
            reconciliation_id=f"rec-{evidence}", evidence_digest=content_digest(evidence.encode()),
            actor="ops@example.test", audit={"proof": "operator_evidence"},
            orphan_markers=orphans), lease)
    finally:
        journal.release_lease(lease)


def test_a_reconciliation_consumes_contiguous_orphans_and_the_resubmit_takes_a_fresh_ordinal(
        journal: DeliveryJournalPort, reservations: Reservations) -> None:
    child = _unknown(journal)
    orphans = (_orphan(child, 2), _orphan(child, 3))

    absent = _reconcile(journal, child, orphans)

    assert absent.state_name == "final_not_accepted_none"
    assert (absent.attempt_ordinal, absent.revision) == (3, child.revision + 2 + len(orphans))
    attempts = journal.list_attempts(child.operation_id)
    assert [(a["attempt_ordinal"], a["marker_key"], a["marker_digest"], a["outcome"])
            for a in attempts[1:]] == [(o.attempt_ordinal, o.marker_key, o.marker_digest,
                                        CONSUMED) for o in orphans]
    # capacity: only the first attempt ever held the slot, and the reconciliation released it
    assert reservations(child.operation_id) == {attempts[0]["attempt_id"]: NONE[1]}

    resent, _lease = submit(journal, child.operation_id, holder="worker-9")

    assert (resent.state_name, resent.attempt_ordinal) == ("submitting", 4)
    latest = journal.list_attempts(child.operation_id)[-1]
    assert latest["marker_key"] == may_attempt_marker_key(
        child.tenancy.operation_namespace, child.operation_id, 4)
    assert reservations(child.operation_id) == {attempts[0]["attempt_id"]: NONE[1],
                                                latest["attempt_id"]: None}
    assert resent.delivery_key == child.delivery_key


@pytest.mark.parametrize("orphans", [
    pytest.param(lambda c: (_orphan(c, 3),), id="gap_before_first"),
    pytest.param(lambda c: (_orphan(c, 2), _orphan(c, 4)), id="gap_between"),
    pytest.param(lambda c: (_orphan(c, 2), _orphan(c, 2)), id="repeated"),
    pytest.param(lambda c: (_orphan(c, 1),), id="ordinal_with_an_attempt_row"),
    pytest.param(lambda c: (_orphan(c, 2, key_ordinal=3),), id="another_attempts_key"),
])
def test_orphans_not_contiguous_or_with_an_attempt_row_are_refused_and_nothing_changes(
        journal: DeliveryJournalPort, reservations: Reservations, orphans: object) -> None:
    child = _unknown(journal)
    attempts = journal.list_attempts(child.operation_id)
    held = reservations(child.operation_id)
    told = orphans(child)  # type: ignore[operator]

    with pytest.raises(DponeError) as refused:
        _reconcile(journal, child, told)

    assert refused.value.code == "journal.illegal_transition"
    assert journal.get_child(child.operation_id) == child
    assert journal.list_attempts(child.operation_id) == attempts
    assert reservations(child.operation_id) == held
    assert set(held.values()) == {None}  # UNKNOWN keeps its slot


def test_a_marker_met_at_the_reconciled_resubmit_is_an_unknown_effect_to_reconcile_again(
        journal: DeliveryJournalPort, reservations: Reservations) -> None:
    child = _unknown(journal)
    absent = _reconcile(journal, child, ())
    lease = journal.acquire_lease(child.operation_id, "mutation", "worker-9", 60)
    plan = journal.plan_attempt(child.operation_id, lease)
    assert plan.attempt_ordinal == 2
    with pytest.raises(DponeError) as own:  # the planned marker itself is no orphan
        journal.record_orphan_marker(plan, marker_digest(plan.marker), lease, absent.revision)
    assert own.value.code == "journal.illegal_transition"

    found = journal.record_orphan_marker(plan, content_digest(b"late marker"), lease,
                                         absent.revision)
    journal.release_lease(lease)

    assert found.state_name == "final_not_accepted_unknown_unverified"
    assert found.last_error_code == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert (found.attempt_ordinal, found.revision) == (2, absent.revision + 1)
    latest = journal.list_attempts(child.operation_id)[-1]
    assert (latest["attempt_ordinal"], latest["outcome"]) == (
        2, "final_not_accepted_none_orphan_marker_found")
    assert set(reservations(child.operation_id).values()) == {NONE[1]}  # none reserved for it

    again = _reconcile(journal, found, (), evidence="absent-again")
    resent, _lease = submit(journal, child.operation_id, holder="worker-10")

    assert again.state_name == "final_not_accepted_none"
    assert (resent.state_name, resent.attempt_ordinal) == ("submitting", 3)


def test_an_orphan_is_recorded_from_no_effect_only_after_an_operator_reconciliation(
        journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    child, lease = submit(journal, parent.children[0].operation_id)
    child = step(journal, child, "submitting_sync_rejected", "submit_response",
                 "SYNC_CERTIFIED_REJECTION", ["response_recorded"], lease)
    observer = journal.acquire_lease(child.operation_id, "observation", "verifier", 60)
    failed = step(journal, child, "verifying_failed_no_effect", "verification",
                  "NO_EFFECT_VERIFIED", ["verification_recorded", "absence_proven"], observer,
                  error_code="receiver.terminal_failure")
    assert failed.state_name == "final_failed_none"  # verified automatically, not reconciled
    plan = journal.plan_attempt(failed.operation_id, lease)

    with pytest.raises(DponeError) as refused:
        journal.record_orphan_marker(plan, content_digest(b"late marker"), lease, failed.revision)

    assert refused.value.code == "journal.illegal_transition"
    assert journal.get_child(failed.operation_id) == failed
