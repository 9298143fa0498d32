"""The audit trail read for export on every adapter: every record of the environment, oldest
first, with actor, decision, states, revision, expected digests and evidence; narrowed to one
delivery (with its children, never a delivery whose id merely starts the same) or to the records
since a journal time, and bounded."""

from __future__ import annotations

import datetime as dt

from dpone.contracts.journal import DeliveryJournalPort, OperatorActionRecord
from support.journal import two_deliveries


def test_the_audit_trail_is_exported_whole_by_delivery_and_since_a_time(
        journal: DeliveryJournalPort) -> None:
    parent, other = two_deliveries(journal)
    first, second = parent.children
    evidence = "sha256:" + "e" * 64
    reconciled = journal.record_operator_action(OperatorActionRecord(
        operation_id=second.operation_id, command="reconcile", actor="alice",
        before_revision=0, after_revision=1, evidence_digest=evidence,
        reconciliation_id="rec-1"))
    journal.record_operator_action(OperatorActionRecord(
        operation_id=other.parent_id, command="resume", actor="bob", before_revision=0,
        after_revision=0))

    everything = journal.list_audit(limit=1000)
    ids = [record.audit_id for record in everything]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    assert {record.operation_id for record in everything} >= {
        first.operation_id, second.operation_id, other.parent_id}
    assert all(record.actor and record.transition_id for record in everything)
    transitions = [r for r in everything if r.operation_id == first.operation_id]
    assert [r.revision for r in transitions] == sorted(r.revision or 0 for r in transitions)
    assert transitions[-1].to_state == journal.get_child(first.operation_id).state_name

    mine = journal.list_audit(operation_id=parent.parent_id, limit=1000)
    assert {record.operation_id for record in mine} <= {
        parent.parent_id, first.operation_id, second.operation_id}
    assert mine == [r for r in everything if r.operation_id.startswith(parent.parent_id)]
    exported = next(r for r in mine if r.transition_id == "operator_reconcile")
    assert (exported.audit_id, exported.actor, exported.evidence_digest,
            exported.reconciliation_id, exported.digests["after_revision"]) == (
        reconciled.audit_id, "alice", evidence, "rec-1", 1)
    assert journal.list_audit(operation_id=second.operation_id, limit=1000)[-1] == exported
    assert journal.list_audit(operation_id=parent.parent_id[:-1], limit=1000) == []

    since = journal.list_audit(since=exported.at, limit=1000)
    assert exported in since and since == [r for r in everything if r.at >= exported.at]
    later = exported.at + dt.timedelta(days=1)
    assert journal.list_audit(since=later, limit=1000) == []
    assert journal.list_audit(limit=2) == everything[:2]
