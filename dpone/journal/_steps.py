"""Steps shared by the journal's transactions: environment, leases, fence inputs, CAS, audit.

Every step runs through a dialect's ``UnitOfWork``; the locking primitive behind
``lock_environment``/``share_environment``/``lock_parent`` and ``UnitOfWork.lock_domains`` is the
dialect's (row locks in PostgreSQL, the ``BEGIN IMMEDIATE`` write lock in SQLite).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Literal

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import Lease
from dpone.contracts.state import StateContract, TransitionDecision
from dpone.journal._core import axis_values
from dpone.journal._fence import Candidate, FenceRow, Interval, submit_refusal
from dpone.journal._rows_common import fence_row, generation_key, interval
from dpone.journal._unit import UnitOfWork

EnvironmentLock = Literal["none", "share", "update"]
_ENVIRONMENT_QUERIES: dict[EnvironmentLock, str] = {
    "none": "get_environment", "share": "share_environment", "update": "lock_environment"}


def database_now(tx: UnitOfWork) -> dt.datetime:
    """The database clock (never the worker clock), read through the ``clock_now`` query."""
    row = tx.one("clock_now")
    if row is None:
        raise DponeError(code="journal.unavailable", message="the database clock is missing")
    return tx.codec.moment(row["now"])


def environment(tx: UnitOfWork, *, lock: EnvironmentLock = "none") -> tuple[int, str]:
    """(journal_epoch, mutation_gate) of this journal's environment (created OPEN at epoch 0).

    ``share`` holds the row against a gate change until commit, so a gate change cannot
    interleave with a SUBMITTING transaction that has already read the gate as OPEN; ``update``
    holds it for the gate change itself.
    """
    tx.run("ensure_environment")
    row = tx.one(_ENVIRONMENT_QUERIES[lock])
    if row is None:
        raise DponeError(code="journal.unavailable", message="the environment row is missing")
    return int(row["journal_epoch"]), str(row["mutation_gate"])


def live_lease(tx: UnitOfWork, lease: Lease) -> dict[str, Any]:
    """The stored lease if ``lease`` still holds it by the database clock, else lease_lost."""
    row = tx.one("check_lease", operation_id=lease.operation_id, kind=lease.kind)
    if (row is None or row["holder"] != lease.holder or int(row["token"]) != lease.token
            or not row["live"]):
        raise DponeError(code="journal.lease_lost", operation_id=lease.operation_id,
                         message=f"the {lease.kind} lease (token {lease.token}) of "
                         f"{lease.holder!r} expired or was taken over")
    return row


def require_child(tx: UnitOfWork, operation_id: str) -> dict[str, Any]:
    row = tx.one("get_child", operation_id=operation_id)
    if row is None:
        raise DponeError(code="journal.not_found", operation_id=operation_id,
                         message=f"no child operation {operation_id} in this environment")
    return row


def require_parent(tx: UnitOfWork, parent_id: str, *, lock: bool = False) -> dict[str, Any]:
    """The parent row; ``lock`` holds it for update until commit."""
    row = tx.one("lock_parent" if lock else "get_parent", parent_id=parent_id)
    if row is None:
        raise DponeError(code="journal.not_found", operation_id=parent_id,
                         message=f"no parent operation {parent_id} in this environment")
    return row


def fence_inputs(tx: UnitOfWork, domain: str, lo: dt.date,
                 hi: dt.date) -> tuple[list[FenceRow], list[Interval]]:
    """Admitted children and watermarks of ``domain`` overlapping ``[lo, hi)``."""
    codec = tx.codec
    rows = [fence_row(codec, row)
            for row in tx.all("overlapping_children", domain=domain, lo=lo, hi=hi)]
    marks = [interval(codec, row)
             for row in tx.all("overlapping_watermarks", domain=domain, lo=lo, hi=hi)]
    return rows, marks


def fence_refusal(tx: UnitOfWork, row: Mapping[str, Any]) -> DponeError | None:
    """The pre-submit overlap fence's refusal of the child ``row``, or None when its mutation may
    take effect (the caller holds the effect domain)."""
    bounds = tx.codec.scope(row)
    rows, marks = fence_inputs(tx, row["effect_conflict_domain"], bounds.lo, bounds.hi)
    return submit_refusal(Candidate(
        parent_id=row["parent_id"], delivery_key=row["delivery_key"],
        mutation_kind=row["mutation_kind"], generation=generation_key(tx.codec, row),
        scope=bounds, operation_id=row["operation_id"]), rows, marks)


def audit_params(row: Mapping[str, Any], *, actor: str, transition_id: str,
                 from_state: str | None, to_state: str | None, revision: int | None,
                 reconciliation_id: str | None = None, evidence_digest: str | None = None,
                 digests: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``insert_audit`` parameters of one audit row (batched with ``UnitOfWork.run_many``)."""
    return {"operation_namespace": row.get("operation_namespace"),
            "tenant_id": row.get("tenant_id"), "actor": actor,
            "operation_id": row.get("operation_id") or row.get("parent_id"),
            "transition_id": transition_id, "from_state": from_state, "to_state": to_state,
            "revision": revision, "reconciliation_id": reconciliation_id,
            "evidence_digest": evidence_digest, "digests": dict(digests or {})}


def audit(tx: UnitOfWork, row: Mapping[str, Any], *, actor: str, transition_id: str,
          from_state: str | None, to_state: str | None, revision: int | None,
          reconciliation_id: str | None = None, evidence_digest: str | None = None,
          digests: Mapping[str, Any] | None = None) -> None:
    tx.run("insert_audit", **audit_params(
        row, actor=actor, transition_id=transition_id, from_state=from_state,
        to_state=to_state, revision=revision, reconciliation_id=reconciliation_id,
        evidence_digest=evidence_digest, digests=digests))


def apply_decision(tx: UnitOfWork, contract: StateContract, row: Mapping[str, Any],
                   decision: TransitionDecision, *, expected_revision: int, epoch: int,
                   actor: str, receipt: Mapping[str, Any] | None = None,
                   next_check_after: dt.datetime | None = None, error_code: str | None = None,
                   reconciliation_id: str | None = None,
                   evidence_digest: str | None = None) -> dict[str, Any]:
    """The guarded CAS update for an admitted decision; zero rows is a revision conflict."""
    target_name = contract.name_of(decision.target)
    updated = tx.one(
        "cas_child", operation_id=row["operation_id"], expected_revision=expected_revision,
        state_name=target_name, journal_epoch=epoch,
        attempt_step=1 if "attempt_ordinal" in decision.advances else 0,
        observation_step=1 if "observation_ordinal" in decision.advances else 0,
        receipt=dict(receipt) if receipt is not None else None,
        next_check_after=next_check_after, error_code=error_code,
        **axis_values(decision.target))
    if updated is None:
        raise DponeError(code="journal.revision_conflict", operation_id=row["operation_id"],
                         message=f"{decision.transition_id}: revision {expected_revision} is "
                         "no longer current; reread the operation")
    audit(tx, updated, actor=actor, transition_id=decision.transition_id,
          from_state=str(row["state_name"]), to_state=target_name,
          revision=int(updated["revision"]), reconciliation_id=reconciliation_id,
          evidence_digest=evidence_digest,
          digests={"mutation_intent_digest": row["mutation_intent_digest"]})
    return updated
