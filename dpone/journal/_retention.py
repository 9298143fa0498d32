"""Payload retention in the journal: the profile's ``payload_days`` recorded at admission, the
read-only retention plan of an environment, and the audited expiry of eligible parents.

The rules are :mod:`dpone.contracts.retention`'s. ``plan`` reads every child of the environment
(and every child elsewhere in the database that shares one of their keys) once, with each
parent's age decided by the database clock; ``expire_parents`` recomputes the same plan inside
its own critical transaction, holding the environment row for update, then marks each eligible
parent ``payloads_expired_at`` and appends one ``operator_prune`` audit row per parent (actor,
the keys deleted and the keys kept). The caller deletes the plan's ``delete`` keys from the
artifact store after that transaction commits: a failure in between leaves the journal saying
expired and some bytes still present, and the next prune deletes them (an expired parent's
keys stay candidates).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from dpone.contracts.journal import OPERATOR_TRANSITION_PREFIX, ParentAdmission
from dpone.contracts.retention import (
    PRUNE_COMMAND,
    KeptKey,
    RetainedParent,
    RetentionPlan,
    RetentionStanding,
    settled,
)
from dpone.journal._cas import audit_params
from dpone.journal._environment import environment
from dpone.journal._rows import Row, RowCodec, state_tuple
from dpone.journal._unit import UnitOfWork


def record(tx: UnitOfWork, request: ParentAdmission, parent_id: str) -> None:
    """Store the new parent's ``payload_days`` (its admission transaction)."""
    if request.payload_days is not None:
        tx.run("record_payload_retention", parent_id=parent_id,
               payload_days=request.payload_days)


@dataclass
class _Parent:
    environment_id: str
    admitted_at: dt.datetime
    payload_days: int | None
    aged: bool
    expired_at: dt.datetime | None
    keys: list[str] = field(default_factory=list)
    unsettled: list[str] = field(default_factory=list)

    def standing(self) -> tuple[RetentionStanding, str]:
        if self.expired_at is not None:
            return "expired", "its payloads were pruned before"
        if self.payload_days is None:
            return "unrecorded", "admitted before payload retention was recorded: kept"
        if not self.aged:
            return "young", f"admitted within the last {self.payload_days} day(s) (journal clock)"
        if self.unsettled:
            return "unsettled", (f"{len(self.unsettled)} child(ren) not settled: a resume or "
                                 "a reconciliation may still need the bytes")
        return "eligible", (f"admitted more than {self.payload_days} day(s) ago and every "
                            "child settled")


def _parents(codec: RowCodec, rows: Sequence[Row]) -> dict[str, _Parent]:
    parents: dict[str, _Parent] = {}
    for row in rows:
        parent = parents.get(row["parent_id"])
        if parent is None:
            days = row["payload_days"]
            parent = parents[row["parent_id"]] = _Parent(
                environment_id=str(row["environment_id"]),
                admitted_at=codec.moment(row["admitted_at"]),
                payload_days=None if days is None else int(days), aged=bool(row["aged"]),
                expired_at=codec.optional_moment(row["payloads_expired_at"]))
        for key in (row["payload_key"], row["payload_document_key"]):
            if key not in parent.keys:
                parent.keys.append(str(key))
        if not settled(state_tuple(row)):
            parent.unsettled.append(str(row["operation_id"]))
    return parents


def standings(codec: RowCodec, rows: Sequence[Row]) -> dict[str, RetentionStanding]:
    """The standing of each parent of ``rows`` (``retention_children`` rows: every child of
    each parent, with its retention facts), as :func:`plan` decides it."""
    return {parent_id: parent.standing()[0] for parent_id, parent in _parents(codec, rows).items()}


def plan(tx: UnitOfWork, environment_id: str) -> RetentionPlan:
    """The environment's retention plan now (a read that writes nothing)."""
    parents = _parents(tx.codec, tx.all("retention_children"))
    standings = {parent_id: parent.standing() for parent_id, parent in parents.items()}
    letting_go = {parent_id for parent_id, parent in parents.items()
                  if parent.environment_id == environment_id
                  and standings[parent_id][0] in ("eligible", "expired")}
    needed: dict[str, list[str]] = {}
    for parent_id, parent in parents.items():
        # Another environment's parent is judged conservatively: it needs its keys until its
        # own environment expires it.
        if parent_id not in letting_go and parent.expired_at is None:
            for key in parent.keys:
                needed.setdefault(key, []).append(parent_id)
    candidates = sorted({key for parent_id in letting_go for key in parents[parent_id].keys})
    return RetentionPlan(
        environment_id=environment_id, journal_now=tx.now(),
        parents=tuple(
            RetainedParent(parent_id=parent_id, standing=standings[parent_id][0],
                           reason=standings[parent_id][1], admitted_at=parent.admitted_at,
                           payload_days=parent.payload_days,
                           payloads_expired_at=parent.expired_at,
                           unsettled_children=tuple(parent.unsettled)
                           if standings[parent_id][0] == "unsettled" else (),
                           keys=tuple(parent.keys))
            for parent_id, parent in parents.items()
            if parent.environment_id == environment_id),
        delete=tuple(key for key in candidates if key not in needed),
        keep=tuple(KeptKey(key=key, needed_by=tuple(needed[key]))
                   for key in candidates if key in needed))


def expire_parents(tx: UnitOfWork, environment_id: str, *, actor: str) -> RetentionPlan:
    """Recompute the plan under the environment row lock, mark every eligible parent's payloads
    expired and audit each (``operator_prune``); the plan as decided, with the parents this
    transaction expired now standing ``expired``."""
    environment(tx, lock="update")  # one prune at a time; serialized with SUBMITTING
    decided = plan(tx, environment_id)
    deleting = set(decided.delete)
    kept = {entry.key: entry.needed_by for entry in decided.keep}
    audits = []
    expired: dict[str, dt.datetime] = {}
    for parent in decided.eligible:
        row = tx.one("expire_parent_payloads", parent_id=parent.parent_id)
        if row is None:
            continue
        expired[parent.parent_id] = tx.codec.moment(row["payloads_expired_at"])
        audits.append(audit_params(
            operation_id=parent.parent_id, actor=actor,
            transition_id=OPERATOR_TRANSITION_PREFIX + PRUNE_COMMAND,
            from_state="RETAINED", to_state="EXPIRED", revision=0,
            digests={"command": PRUNE_COMMAND, "before_revision": 0, "after_revision": 0,
                     "details": {
                         "payload_days": parent.payload_days,
                         "admitted_at": parent.admitted_at.isoformat(),
                         "deleted_keys": [key for key in parent.keys if key in deleting],
                         "kept_keys": {key: list(kept[key]) for key in parent.keys
                                       if key in kept}}}))
    tx.run_many("insert_audits", audits)
    return decided.model_copy(update={"parents": tuple(
        parent.model_copy(update={"standing": "expired", "expired_now": True,
                                  "payloads_expired_at": expired[parent.parent_id],
                                  "reason": "its payloads expired now"})
        if parent.parent_id in expired else parent for parent in decided.parents)})
