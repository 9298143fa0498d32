"""Namespace scope: one operation namespace never reads or moves another's operations.

A journal is scoped to one environment id (every query binds it). Several operation namespaces
can share that id and one database: two tenants whose environments are both called ``prod``,
two platform instances, or two namespace revisions of one environment (a namespace reset).
A journal opened with the caller's ``operation_namespace`` refuses, inside the transaction that
would read or move it, every operation of another namespace with ``journal.foreign_namespace``:
nothing is returned and nothing is written. The check reads the operation's parent row (a
child's id is its parent's id and an ordinal), so one rule covers parents, children, their
leases, attempts, observations and audit rows.

The message names neither the other namespace nor its tenant: a refusal leaks no more than that
the id exists elsewhere.
"""

from __future__ import annotations

import re

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import Tenancy
from dpone.journal._rows import ReservationRow
from dpone.journal._unit import UnitOfWork

_OPERATION_ID = re.compile(r"^(op_v1_[0-9a-f]{64})(?:_[0-9]{4})?$")


def refusal(operation_id: str, namespace: str) -> DponeError:
    return DponeError(
        code="journal.foreign_namespace", operation_id=operation_id,
        message=f"operation {operation_id} belongs to another operation namespace than this "
                f"command's ({namespace}); nothing was read or changed",
        details={"operation_namespace": namespace})


def parent_of(operation_id: str) -> str | None:
    """The parent id of a parent or child operation id; None for any other id."""
    match = _OPERATION_ID.match(operation_id)
    return match.group(1) if match else None


def check_owned(tx: UnitOfWork, namespace: str | None, operation_id: str,
                owned: set[str] | None = None) -> None:
    """Refuse ``operation_id`` when this journal is scoped to ``namespace`` and the operation's
    parent, stored in this environment, belongs to another namespace. An unknown operation is
    left to the caller's own ``journal.not_found``.

    ``owned``: parent ids already found in ``namespace`` by this journal. A parent's namespace
    is part of its identity and never changes, so each parent is read once per journal."""
    if namespace is None:
        return
    parent_id = parent_of(operation_id)
    if parent_id is None or (owned is not None and parent_id in owned):
        return
    row = tx.one("parent_namespace", parent_id=parent_id)
    if row is None:
        return
    if row["operation_namespace"] != namespace:
        raise refusal(operation_id, namespace)
    if owned is not None:
        owned.add(parent_id)


def check_reservation_owned(tx: UnitOfWork, namespace: str | None, attempt_id: str) -> None:
    """Refuse the capacity reservation of ``attempt_id`` when its operation is another
    namespace's (an unknown reservation is left to the caller's own refusal)."""
    if namespace is None:
        return
    row = tx.one("get_reservation", attempt_id=attempt_id)
    if row is not None:
        check_owned(tx, namespace, ReservationRow.decode(row).operation_id)


def check_tenancy(namespace: str | None, tenancy: Tenancy) -> None:
    """Refuse a request made for another namespace than the one this journal is scoped to."""
    if namespace is not None and tenancy.operation_namespace != namespace:
        raise DponeError(
            code="journal.foreign_namespace",
            message=f"the request names another operation namespace than this journal's "
                    f"({namespace}); nothing was read or changed",
            details={"operation_namespace": namespace})
