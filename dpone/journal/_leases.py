"""Lease authority: acquiring a lease by the database clock, and checking a held one.

A lease is for one operation and one kind; ``live_lease`` rereads it in the transaction that
relies on it. After SUBMITTING only the mutation lease that entered the latest attempt may
record its outcome or replay it (``check_submit_holder``).
"""

from __future__ import annotations

from collections.abc import Collection

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import Lease, LeaseKindName
from dpone.journal._rows import AttemptRow, ChildRow, LeaseRow
from dpone.journal._unit import UnitOfWork


def check_lease_identity(lease: Lease, operation_id: str, kinds: Collection[str]) -> None:
    """The lease must be for this operation and of an allowed kind."""
    if lease.operation_id != operation_id or lease.kind not in kinds:
        raise DponeError(code="journal.lease_lost", operation_id=operation_id,
                         message=f"a {'/'.join(sorted(kinds))} lease on {operation_id} is "
                         f"required, not a {lease.kind} lease on {lease.operation_id}")


def live_lease(tx: UnitOfWork, lease: Lease) -> LeaseRow:
    """The stored lease if ``lease`` still holds it by the database clock, else lease_lost."""
    row = tx.one("check_lease", operation_id=lease.operation_id, kind=lease.kind)
    stored = LeaseRow.decode(row) if row is not None else None
    if (stored is None or stored.holder != lease.holder or stored.token != lease.token
            or not stored.live):
        raise DponeError(code="journal.lease_lost", operation_id=lease.operation_id,
                         message=f"the {lease.kind} lease (token {lease.token}) of "
                         f"{lease.holder!r} expired or was taken over")
    return stored


def acquire(tx: UnitOfWork, operation_id: str, kind: LeaseKindName, holder: str,
            ttl_seconds: int, journal_epoch: int) -> Lease:
    """Take (or take over an expired or older-epoch) lease; a live one held by another refuses."""
    if tx.one("operation_exists", operation_id=operation_id) is None:
        raise DponeError(code="journal.not_found", operation_id=operation_id,
                         message=f"no operation {operation_id} in this environment")
    row = tx.one("acquire_lease", operation_id=operation_id, kind=kind, holder=holder,
                 journal_epoch=journal_epoch, ttl_seconds=int(ttl_seconds))
    if row is None:
        raise DponeError(code="journal.lease_held", operation_id=operation_id,
                         message=f"another worker holds the {kind} lease")
    return Lease(operation_id=row["operation_id"], kind=row["kind"], holder=row["holder"],
                 token=int(row["token"]), expires_at=tx.codec.moment(row["expires_at"]))


def check_submit_holder(tx: UnitOfWork, row: ChildRow, lease: Lease) -> AttemptRow | None:
    """After SUBMITTING only the lease that submitted records its outcome or replays.

    Returns the latest attempt when the check applies (a mutation lease on a SUBMITTING
    tuple), else None.
    """
    if lease.kind != "mutation" or not row.submitting:
        return None
    stored = tx.one("latest_attempt", operation_id=row.operation_id)
    attempt = AttemptRow.decode(stored) if stored is not None else None
    if attempt is None or (attempt.lease_holder, attempt.lease_token) != (
            lease.holder, lease.token):
        raise DponeError(code="journal.lease_lost", operation_id=row.operation_id,
                         message="another mutation lease entered SUBMITTING for this attempt; "
                         "a takeover is observation or reconciliation only")
    return attempt
