"""Reads of stored operations as typed rows: children, parents, and the overlap fence's inputs.

The pre-submit overlap fence (``fence_refusal``) is read here for both transactions that need
it: entering SUBMITTING and finalizing an empty child as fully applied. The caller holds the
effect domain (``UnitOfWork.lock_domains``) so the answer stays true until commit.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import ParentOperation
from dpone.journal._fence import Candidate, FenceRow, Interval, submit_refusal
from dpone.journal._models import parent_model
from dpone.journal._rows import ChildRow, ParentRow, fence_row, interval
from dpone.journal._unit import UnitOfWork


def children(tx: UnitOfWork, query: str, /, **params: Any) -> list[ChildRow]:
    """The child rows a named query returns (``children_of_parent``, ``children_by_key`` ...)."""
    return [ChildRow.decode(tx.codec, row) for row in tx.all(query, **params)]


def require_child(tx: UnitOfWork, operation_id: str) -> ChildRow:
    row = tx.one("get_child", operation_id=operation_id)
    return present_child(operation_id, ChildRow.decode(tx.codec, row) if row is not None else None)


def present_child(operation_id: str, row: ChildRow | None) -> ChildRow:
    """``row`` (the child as this transaction read it), or ``journal.not_found``."""
    if row is None:
        raise DponeError(code="journal.not_found", operation_id=operation_id,
                         message=f"no child operation {operation_id} in this environment")
    return row


def require_parent(tx: UnitOfWork, parent_id: str, *, lock: bool = False) -> ParentRow:
    """The parent row; ``lock`` holds it for update until commit."""
    row = (tx.one("lock_parent", parent_id=parent_id) if lock
           else tx.one("get_parent", parent_id=parent_id))
    if row is None:
        raise DponeError(code="journal.not_found", operation_id=parent_id,
                         message=f"no parent operation {parent_id} in this environment")
    return ParentRow.decode(tx.codec, row)


def parent_operation(tx: UnitOfWork, parent: ParentRow) -> ParentOperation:
    """The parent with its children in ordinal order, as the port returns it."""
    return parent_model(parent, children(tx, "children_of_parent", parent_id=parent.parent_id))


def fence_inputs(tx: UnitOfWork, domain: str, lo: dt.date,
                 hi: dt.date) -> tuple[list[FenceRow], list[Interval]]:
    """Admitted children and watermarks of ``domain`` overlapping ``[lo, hi)``."""
    codec = tx.codec
    rows = [fence_row(codec, row)
            for row in tx.all("overlapping_children", domain=domain, lo=lo, hi=hi)]
    marks = [interval(codec, row)
             for row in tx.all("overlapping_watermarks", domain=domain, lo=lo, hi=hi)]
    return rows, marks


def fence_refusal(tx: UnitOfWork, row: ChildRow) -> DponeError | None:
    """The pre-submit overlap fence's refusal of the child ``row``, or None when its mutation may
    take effect (the caller holds the effect domain)."""
    rows, marks = fence_inputs(tx, row.effect_conflict_domain, row.scope.lo, row.scope.hi)
    return submit_refusal(Candidate(
        parent_id=row.parent_id, delivery_key=row.delivery_key, mutation_kind=row.mutation_kind,
        generation=row.generation, scope=row.scope, operation_id=row.operation_id), rows, marks)


def prior_reconciliation(tx: UnitOfWork, operation_id: str) -> tuple[set[str], set[str]]:
    """The reconciliation ids and evidence digests already recorded for ``operation_id``."""
    ids: set[str] = set()
    digests: set[str] = set()
    for prior in tx.all("prior_reconciliation", operation_id=operation_id):
        reconciliation_id, evidence_digest = prior["reconciliation_id"], prior["evidence_digest"]
        ids.update([reconciliation_id] if reconciliation_id else [])
        digests.update([evidence_digest] if evidence_digest else [])
    return ids, digests
