"""The operator audit trail on every adapter: an operator action is appended as an audit row
``operator_<command>`` and read back, oldest first, for exactly the operations asked about;
the audit rows of ordinary transitions are not operator actions."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dpone.contracts.journal import DeliveryJournalPort, OperatorActionRecord
from support.journal import two_deliveries


def test_operator_actions_are_recorded_and_listed_for_the_operations_asked_about(
        journal: DeliveryJournalPort) -> None:
    parent, other = two_deliveries(journal)
    first, second = parent.children
    evidence = "sha256:" + "e" * 64

    resumed = journal.record_operator_action(OperatorActionRecord(
        operation_id=parent.parent_id, command="resume", actor="ops@example",
        before_revision=0, after_revision=3, from_state="blocked", to_state="completed",
        details={"children": [{"ordinal": 1, "before_revision": 0, "after_revision": 3}]}))
    reconciled = journal.record_operator_action(OperatorActionRecord(
        operation_id=second.operation_id, command="reconcile", actor="alice",
        before_revision=0, after_revision=1, evidence_digest=evidence,
        reconciliation_id="rec-1"))
    journal.record_operator_action(OperatorActionRecord(
        operation_id=other.parent_id, command="resume", actor="bob", before_revision=0,
        after_revision=0))

    listed = journal.list_operator_actions([parent.parent_id, first.operation_id,
                                            second.operation_id])

    assert listed == [resumed, reconciled]
    assert resumed.audit_id < reconciled.audit_id and resumed.at <= reconciled.at
    assert (resumed.transition_id, resumed.actor, resumed.details["children"][0]["ordinal"]) == (
        "operator_resume", "ops@example", 1)
    assert (reconciled.command, reconciled.evidence_digest, reconciled.reconciliation_id) == (
        "reconcile", evidence, "rec-1")
    assert journal.list_operator_actions([first.operation_id]) == []
    assert journal.list_operator_actions([]) == []


def test_an_operator_action_names_a_command_and_an_actor() -> None:
    for bad in ({"command": "Resume;drop"}, {"actor": ""}):
        with pytest.raises(ValidationError):
            OperatorActionRecord(**{"operation_id": "op", "command": "resume", "actor": "a",
                                    "before_revision": 0, "after_revision": 0, **bad})
