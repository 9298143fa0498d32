"""The deny-only revocation list and the submit authority of an admitted parent.

A parent records at admission its plan's profile ``id@version``, binding id and the binding's
``remote_identity.valid_until`` (``record_authority``). Every transaction that plans or enters
a new attempt asks ``submit_authority`` after it has read the environment row: a revoked profile
or binding, or an identity attestation expired by the database clock, refuses the submit before
any MAY_ATTEMPT marker or request. Nothing else reads the list: inspection, receipt
observation, verification and reconciliation go on whatever it says.

A change of the list (``change``) holds the environment row for update, as a gate change does:
a SUBMITTING transaction holds it for share from before it reads the list until it commits, so
a revocation either commits first (and the submit sees it) or waits for the submit to commit.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import ParentAdmission
from dpone.contracts.revocation import (
    MAX_REVOCATION_HISTORY,
    REVOCATION_TRANSITIONS,
    Revocation,
    RevocationAction,
    RevocationChange,
    RevocationStatus,
    RevocationTarget,
)
from dpone.journal._cas import audit
from dpone.journal._environment import environment
from dpone.journal._lookup import require_parent
from dpone.journal._rows import ParentRow, Row, RowCodec
from dpone.journal._unit import UnitOfWork

_UNREVOKE = {"profile": "--profile", "binding": "--binding"}
_ACTIONS: dict[str, RevocationAction] = {value: key for key, value in REVOCATION_TRANSITIONS.items()}


@dataclass(frozen=True, slots=True)
class SubmitAuthority:
    """What a parent's new submits are checked against, and the revocations that name it."""

    profile_ref: str | None
    binding_ref: str | None
    identity_valid_until: dt.datetime | None
    revoked: tuple[Revocation, ...]

    @classmethod
    def decode(cls, codec: RowCodec, rows: Sequence[Row]) -> Self:
        first = rows[0]
        revoked = tuple(
            Revocation(kind=row["revoked_kind"], ref=row["revoked_ref"],
                       reason=str(row["revoked_reason"]), revoked_by=str(row["revoked_by"]),
                       revoked_at=codec.moment(row["revoked_at"]))
            for row in rows if row["revoked_kind"] is not None)
        return cls(profile_ref=_text(first["profile_ref"]), binding_ref=_text(first["binding_ref"]),
                   identity_valid_until=codec.optional_moment(first["identity_valid_until"]),
                   revoked=revoked)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def record_authority(tx: UnitOfWork, request: ParentAdmission, parent_id: str) -> None:
    """Store what the new parent's submits are checked against (its admission transaction)."""
    tx.run("record_parent_authority", parent_id=parent_id, profile_ref=request.profile_ref,
           binding_ref=request.binding_ref, identity_valid_until=request.identity_valid_until)


def submit_authority(tx: UnitOfWork, parent_id: str,
                     operation_id: str) -> tuple[ParentRow, DponeError | None]:
    """The parent of a new submit of ``operation_id`` and the submit's refusal, if any (one
    statement): a revoked profile, a revoked binding, or an expired remote identity (database
    clock). A missing parent is ``journal.not_found``."""
    rows = tx.all("submit_authority", parent_id=parent_id)
    if not rows:
        return require_parent(tx, parent_id), None  # refuses the missing parent
    return ParentRow.decode(tx.codec, rows[0]), _refusal(tx, rows, operation_id)


def _refusal(tx: UnitOfWork, rows: Sequence[Row], operation_id: str) -> DponeError | None:
    authority = SubmitAuthority.decode(tx.codec, rows)
    if authority.revoked:
        return _revoked(authority.revoked[0], operation_id)
    expiry = authority.identity_valid_until
    if expiry is not None:
        now = tx.codec.moment(rows[0]["journal_now"])
        if expiry <= now:
            return DponeError(
                code="governance.identity_expired", operation_id=operation_id,
                message=f"the remote identity of binding {authority.binding_ref} was attested "
                f"until {expiry.isoformat(timespec='seconds')}; the journal clock reads "
                f"{now.isoformat(timespec='seconds')}: no new submit uses an expired "
                "attestation; observation and reconciliation remain available",
                details={"binding": authority.binding_ref,
                         "valid_until": expiry.isoformat(), "journal_now": now.isoformat()})
    return None


def _revoked(entry: Revocation, operation_id: str) -> DponeError:
    noun = "operation profile" if entry.kind == "profile" else "connection binding"
    return DponeError(
        code=f"governance.{entry.kind}_revoked", operation_id=operation_id,
        message=f"the {noun} {entry.ref} is revoked in this environment (by {entry.revoked_by} "
        f"at {entry.revoked_at.isoformat(timespec='seconds')}: {entry.reason}); no new submit "
        "uses it; observation and reconciliation remain available",
        hint=f"`dpone admin revocations` lists the revocations; once the {noun} is cleared, "
             f"`dpone admin unrevoke {_UNREVOKE[entry.kind]} {entry.ref} --reason ...` lifts it "
             "and `dpone delivery resume --apply` continues.",
        details={"kind": entry.kind, "ref": entry.ref, "revoked_by": entry.revoked_by})


def status(tx: UnitOfWork, environment_id: str) -> RevocationStatus:
    """The current list and its newest audited changes (a read that creates nothing)."""
    codec = tx.codec
    revoked = tuple(
        Revocation(kind=row["kind"], ref=row["ref"], reason=row["reason"],
                   revoked_by=row["revoked_by"], revoked_at=codec.moment(row["revoked_at"]))
        for row in tx.all("revocations"))
    history = tuple(_change(codec, row)
                    for row in tx.all("revocation_history", limit=MAX_REVOCATION_HISTORY))
    return RevocationStatus(environment_id=environment_id, revoked=revoked, history=history)


def _change(codec: RowCodec, row: Row) -> RevocationChange:
    digests = codec.document(row["digests"])
    return RevocationChange(kind=digests["kind"], ref=digests["ref"],
                            action=_ACTIONS[str(row["transition_id"])],
                            reason=str(digests["reason"]), actor=str(row["actor"]),
                            at=codec.moment(row["at"]))


def change(tx: UnitOfWork, environment_id: str, target: RevocationTarget, *, revoked: bool,
           actor: str, reason: str) -> bool:
    """Revoke or unrevoke ``target``; True when the list changed (and one audit row was
    written), False when it already stood so (nothing written)."""
    environment(tx, lock="update")  # serializes with every SUBMITTING transaction
    params = {"kind": target.kind, "ref": target.ref}
    changed = (tx.run("insert_revocation", reason=reason, actor=actor, **params) if revoked
               else tx.run("delete_revocation", **params)) > 0
    if changed:
        action: RevocationAction = "revoke" if revoked else "unrevoke"
        audit(tx, operation_id=environment_id, actor=actor,
              transition_id=REVOCATION_TRANSITIONS[action],
              from_state="ACTIVE" if revoked else "REVOKED",
              to_state="REVOKED" if revoked else "ACTIVE", revision=None,
              digests={**params, "reason": reason})
    return changed
