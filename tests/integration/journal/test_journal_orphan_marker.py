"""An orphan MAY_ATTEMPT marker of an older journal epoch, on every journal.

A run planned and published an attempt's marker, then the environment's gate was blocked and
reopened at a new epoch (a journal restore): the next plan of that attempt binds the new epoch,
so its marker differs from the one at the key and the store refuses it. The old marker may
mean that a request was sent which the journal forgot, so the child must neither stay stuck
nor be submitted under that ordinal: ``*_orphan_marker_found`` finalizes it UNKNOWN and consumes
the ordinal; a reconciliation that proves nothing applied lets the next ordinal go out with the
same delivery key.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import DponeError, canonical_json, content_digest
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, ReconcileRequest
from dpone.journal._marker import marker_digest
from support.journal import ENVIRONMENT, admission, step, submit

NONE = ("reconcile_open_not_accepted_unknown_unverified", "reconcile_not_accepted_unknown_to_none")


def _orphaned(journal: DeliveryJournalPort, store: LocalArtifactStore,
              *, retry_wait: bool = False) -> tuple[ChildOperation, str]:
    """A child whose next attempt's marker key holds a marker of the previous epoch."""
    child = journal.admit_parent(admission([(0, 10)])).parent.children[0]
    if retry_wait:
        child, lease = submit(journal, child.operation_id)
        child = step(journal, child, "submitting_not_started_retry", "transport",
                     "REQUEST_NOT_STARTED", ["request_not_started_proof",
                                             "retry_budget_remaining"], lease)
        journal.release_lease(lease)
    lease = journal.acquire_lease(child.operation_id, "mutation", "old-run", 60)
    old = journal.plan_attempt(child.operation_id, lease)
    store.put_bytes(old.marker_key, canonical_json(old.marker))  # then the journal was restored
    journal.release_lease(lease)
    epoch = journal.journal_epoch(ENVIRONMENT)
    journal.set_mutation_gate(ENVIRONMENT, "BLOCKED", epoch=epoch, actor="sre", reason="restore")
    journal.set_mutation_gate(ENVIRONMENT, "OPEN", epoch=epoch + 1, actor="sre",
                              reason="approved")
    return journal.get_child(child.operation_id), old.marker_key


@pytest.mark.parametrize("retry_wait", [False, True], ids=["sealed", "retry_wait"])
def test_an_orphan_marker_finalizes_unknown_and_its_ordinal_is_never_planned_again(
        journal: DeliveryJournalPort, tmp_path: Path, retry_wait: bool) -> None:
    store = LocalArtifactStore(tmp_path / "markers")
    child, key = _orphaned(journal, store, retry_wait=retry_wait)
    lease = journal.acquire_lease(child.operation_id, "mutation", "new-run", 60)
    plan = journal.plan_attempt(child.operation_id, lease)
    assert plan.marker_key == key
    with pytest.raises(DponeError) as conflict:
        store.put_bytes(plan.marker_key, canonical_json(plan.marker))
    assert conflict.value.code == "artifact.conflict"
    orphan = content_digest(store.get_bytes(key))
    with pytest.raises(DponeError) as own:
        journal.record_orphan_marker(plan, marker_digest(plan.marker), lease, child.revision)
    assert own.value.code == "journal.illegal_transition"

    found = journal.record_orphan_marker(plan, orphan, lease, child.revision)

    assert found.state_name == "final_not_accepted_unknown_unverified"
    assert found.last_error_code == "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    assert (found.attempt_ordinal, found.revision) == (plan.attempt_ordinal, child.revision + 1)
    latest = journal.list_attempts(child.operation_id)[-1]
    assert (latest["attempt_ordinal"], latest["marker_key"], latest["marker_digest"]) == (
        plan.attempt_ordinal, key, orphan)
    assert latest["outcome"] == ("retry_wait_orphan_marker_found" if retry_wait
                                 else "sealed_orphan_marker_found")
    with pytest.raises(DponeError) as again:
        journal.plan_attempt(child.operation_id, lease)  # nothing is submitted any more
    assert again.value.code == "journal.illegal_transition"
    journal.release_lease(lease)

    operator = journal.acquire_lease(child.operation_id, "operator", "ops", 60)
    absent = journal.reconcile(ReconcileRequest(
        operation_id=child.operation_id, expected_revision=found.revision,
        open_transition_id=NONE[0], resolve_transition_id=NONE[1],
        facts=("operator_authority_audited", "read_only_receiver_evidence"),
        reconciliation_id="rec-orphan", evidence_digest=content_digest(b"absent"),
        actor="ops@example.test", audit={"proof": "query_by_key"}), operator)
    journal.release_lease(operator)
    resent, _lease = submit(journal, child.operation_id, holder="worker-9")

    assert absent.state_name == "final_not_accepted_none"
    assert (resent.state_name, resent.attempt_ordinal) == ("submitting", plan.attempt_ordinal + 1)
    assert resent.delivery_key == child.delivery_key


def test_an_orphan_marker_is_recorded_only_for_the_next_attempt_of_a_waiting_child(
        journal: DeliveryJournalPort, tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "markers")
    child, _key = _orphaned(journal, store)
    lease = journal.acquire_lease(child.operation_id, "mutation", "new-run", 60)
    plan = journal.plan_attempt(child.operation_id, lease)
    later = plan.model_copy(update={"attempt_ordinal": plan.attempt_ordinal + 1})
    with pytest.raises(DponeError) as not_next:
        journal.record_orphan_marker(later, "sha256:" + "1" * 64, lease, child.revision)
    with pytest.raises(DponeError) as stale:
        journal.record_orphan_marker(plan, "sha256:" + "1" * 64, lease, child.revision - 1)

    assert not_next.value.code == "journal.illegal_transition"
    assert stale.value.code == "journal.revision_conflict"
    assert journal.get_child(child.operation_id) == child
    assert journal.list_attempts(child.operation_id) == []
