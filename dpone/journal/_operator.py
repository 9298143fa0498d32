"""The operator audit trail: audit rows ``operator_<command>`` appended and read back, and the
whole audit trail read for export (:func:`audit_records`).

An operator action (``dpone delivery resume --apply``, ``dpone delivery reconcile --apply``) is
one ``rest_delivery_audit`` row: ``actor`` the operator, ``transition_id`` ``operator_<command>``,
``revision`` the operation's revision after it, and ``digests`` holding ``command``,
``before_revision``, ``after_revision`` and the command's ``details``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import (
    OPERATOR_TRANSITION_PREFIX,
    AuditRecord,
    OperatorAction,
    OperatorActionRecord,
)
from dpone.journal._cas import audit_params
from dpone.journal._rows import Row, RowCodec
from dpone.journal._unit import UnitOfWork

_TYPED = ("command", "before_revision", "after_revision")


def record(tx: UnitOfWork, action: OperatorActionRecord) -> OperatorAction:
    """Append ``action``'s audit row; the action with its audit id and journal time."""
    stored = tx.one("insert_operator_audit", **audit_params(
        operation_id=action.operation_id, actor=action.actor,
        transition_id=action.transition_id, from_state=action.from_state,
        to_state=action.to_state, revision=action.after_revision,
        reconciliation_id=action.reconciliation_id, evidence_digest=action.evidence_digest,
        digests={"command": action.command, "before_revision": action.before_revision,
                 "after_revision": action.after_revision, "details": action.details}))
    if stored is None:  # an INSERT ... RETURNING returns its row
        raise DponeError(code="journal.unavailable",
                         message="the journal did not confirm the operator audit row")
    return OperatorAction(**action.model_dump(), audit_id=int(stored["audit_id"]),
                          at=tx.codec.moment(stored["at"]))


def decode(codec: RowCodec, row: Row) -> OperatorAction:
    """One ``list_operator_actions`` row as the typed action (``digests`` decoded once here)."""
    digests: dict[str, Any] = dict(codec.document(row["digests"]) or {})
    transition_id = str(row["transition_id"])
    details = digests.get("details")
    return OperatorAction(
        audit_id=int(row["audit_id"]), operation_id=row["operation_id"],
        command=str(digests.get("command") or transition_id.removeprefix(
            OPERATOR_TRANSITION_PREFIX)),
        actor=row["actor"], at=codec.moment(row["at"]),
        before_revision=int(digests.get("before_revision") or 0),
        after_revision=int(digests.get("after_revision") or row["revision"] or 0),
        from_state=row["from_state"], to_state=row["to_state"],
        evidence_digest=row["evidence_digest"], reconciliation_id=row["reconciliation_id"],
        details=details if isinstance(details, dict) else {
            key: value for key, value in digests.items() if key not in _TYPED})


def listed(tx: UnitOfWork, operation_ids: Sequence[str]) -> list[OperatorAction]:
    if not operation_ids:
        return []
    return [decode(tx.codec, row)
            for row in tx.all("list_operator_actions", operation_ids=list(operation_ids))]


def audit_records(tx: UnitOfWork, *, operation_id: str | None, since: dt.datetime | None,
                  limit: int) -> list[AuditRecord]:
    """``list_audit`` rows as typed records (``digests`` decoded once here)."""
    return [AuditRecord(
        audit_id=int(row["audit_id"]), at=tx.codec.moment(row["at"]), actor=row["actor"],
        operation_id=row["operation_id"], operation_namespace=row["operation_namespace"],
        tenant_id=row["tenant_id"], transition_id=row["transition_id"],
        from_state=row["from_state"], to_state=row["to_state"],
        revision=None if row["revision"] is None else int(row["revision"]),
        reconciliation_id=row["reconciliation_id"], evidence_digest=row["evidence_digest"],
        digests=dict(tx.codec.document(row["digests"]) or {}))
        for row in tx.all("list_audit", operation_id=operation_id, since=since, limit=limit)]
