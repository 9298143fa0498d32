"""Lease authority: acquiring a lease by the database clock, and checking a held one.

A lease is for one operation and one kind; ``live_lease`` rereads it in the transaction that
relies on it. A ``LeaseClaim`` is a lease held for one transaction only (``holding``: taken at
its start, released before its commit). After SUBMITTING only the mutation lease that entered
the latest attempt may record its outcome or replay it (``check_submit_holder``).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Collection
from typing import Final, TypeVar

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import Lease, LeaseClaim, LeaseKindName, Tenancy
from dpone.journal._environment import environment
from dpone.journal._rows import AttemptRow, ChildRow, LeaseRow
from dpone.journal._unit import UnitOfWork

_T = TypeVar("_T")


class Unread:
    """Not read yet by this transaction (the type of :data:`UNREAD`)."""


UNREAD: Final = Unread()

LEASE_KINDS: Final = frozenset({"mutation", "observation", "checkpoint", "operator"})
MAX_LEASE_TTL_SECONDS: Final = 86_400


def check_lease_request(operation_id: str, kind: str, holder: str, ttl_seconds: int) -> None:
    """A lease needs a known kind, a holder and a TTL of 1..``MAX_LEASE_TTL_SECONDS``."""
    if kind not in LEASE_KINDS or not 0 < ttl_seconds <= MAX_LEASE_TTL_SECONDS or not holder:
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message="a lease needs a known kind, a holder and a TTL in "
                         f"1..{MAX_LEASE_TTL_SECONDS} seconds")


def holding(tx: UnitOfWork, lease: Lease | LeaseClaim,
            work: Callable[[Lease, int | None], _T], *, releasing: Lease | None = None) -> _T:
    """``work`` under ``lease``: a held lease as it is, a claim taken here (refused while another
    holder's lease is live) and released once ``work`` is done, in this same transaction.

    ``work`` receives the lease and, for a claim, the journal epoch it was taken under: a lease
    this transaction took is live until it commits, so it is not read again (``granted_epoch``).
    The work reads its operation and refuses a missing one, which rolls the lease back.
    ``releasing``: a lease of the same operation given up with the claim, in one statement.
    """
    if isinstance(lease, Lease):
        result = work(lease, None)
        if releasing is not None:
            release(tx, releasing)
        return result
    check_lease_request(lease.operation_id, lease.kind, lease.holder, lease.ttl_seconds)
    epoch = environment(tx).journal_epoch
    held = acquire(tx, lease.operation_id, lease.kind, lease.holder, lease.ttl_seconds, epoch,
                   known=True)
    result = work(held, epoch)
    release(tx, held, releasing)
    return result


def granted_epoch(tx: UnitOfWork, lease: Lease, taken_epoch: int | None) -> int:
    """The journal epoch ``lease`` was granted under: ``taken_epoch`` when this transaction took
    it, else read from the stored lease, which must still be live (``live_lease``)."""
    return taken_epoch if taken_epoch is not None else live_lease(tx, lease).journal_epoch


def release(tx: UnitOfWork, lease: Lease, other: Lease | None = None) -> None:
    """Give ``lease`` up (a no-op once it was taken over), and ``other``, a lease of the same
    operation, with it in the same statement."""
    if other is None or other.operation_id != lease.operation_id:
        tx.run("release_lease", operation_id=lease.operation_id, kind=lease.kind,
               holder=lease.holder, token=lease.token)
        if other is not None:
            release(tx, other)
        return
    tx.run("release_two_leases", operation_id=lease.operation_id, kind=lease.kind,
           holder=lease.holder, token=lease.token, other_kind=other.kind,
           other_holder=other.holder, other_token=other.token)


def check_lease_identity(lease: Lease, operation_id: str, kinds: Collection[str]) -> None:
    """The lease must be for this operation and of an allowed kind."""
    if lease.operation_id != operation_id or lease.kind not in kinds:
        raise DponeError(code="journal.lease_lost", operation_id=operation_id,
                         message=f"a {'/'.join(sorted(kinds))} lease on {operation_id} is "
                         f"required, not a {lease.kind} lease on {lease.operation_id}")


def live_lease(tx: UnitOfWork, lease: Lease) -> LeaseRow:
    """The stored lease if ``lease`` still holds it by the database clock, else lease_lost."""
    row = tx.one("check_lease", operation_id=lease.operation_id, kind=lease.kind)
    return held_lease(lease, LeaseRow.decode(row) if row is not None else None)


def held_lease(lease: Lease, stored: LeaseRow | None) -> LeaseRow:
    """``stored`` (the lease as this transaction read it) if ``lease`` still holds it by the
    database clock, else lease_lost."""
    if (stored is None or stored.holder != lease.holder or stored.token != lease.token
            or not stored.live):
        raise DponeError(code="journal.lease_lost", operation_id=lease.operation_id,
                         message=f"the {lease.kind} lease (token {lease.token}) of "
                         f"{lease.holder!r} expired or was taken over")
    return stored


def acquire(tx: UnitOfWork, operation_id: str, kind: LeaseKindName, holder: str,
            ttl_seconds: int, journal_epoch: int, *, known: bool = False) -> Lease:
    """Take (or take over an expired or older-epoch) lease; a live one held by another refuses.

    ``known``: the caller reads the operation in this transaction and refuses a missing one, so
    its existence is not checked here first.
    """
    if not known and tx.one("operation_exists", operation_id=operation_id) is None:
        raise DponeError(code="journal.not_found", operation_id=operation_id,
                         message=f"no operation {operation_id} in this environment")
    row = tx.one("acquire_lease", operation_id=operation_id, kind=kind, holder=holder,
                 journal_epoch=journal_epoch, ttl_seconds=int(ttl_seconds))
    if row is None:
        raise held_refusal(tx, operation_id, kind)
    return Lease(operation_id=row["operation_id"], kind=row["kind"], holder=row["holder"],
                 token=int(row["token"]), expires_at=tx.codec.moment(row["expires_at"]))


def renew(tx: UnitOfWork, lease: Lease, ttl_seconds: int) -> Lease:
    """Extend ``lease`` (same holder and token, still live by the database clock) to
    ``ttl_seconds`` from now; ``journal.lease_lost`` when it expired or was taken over."""
    row = tx.one("renew_lease", operation_id=lease.operation_id, kind=lease.kind,
                 holder=lease.holder, token=lease.token, ttl_seconds=int(ttl_seconds))
    if row is None:
        raise DponeError(code="journal.lease_lost", operation_id=lease.operation_id,
                         message=f"the {lease.kind} lease (token {lease.token}) of "
                         f"{lease.holder!r} expired or was taken over before its heartbeat")
    return lease.model_copy(update={"expires_at": tx.codec.moment(row["expires_at"])})


def iso_utc(moment: dt.datetime) -> str:
    """``moment`` as ISO 8601 UTC to the second, ``Z``-suffixed (how refusals name a time)."""
    return moment.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def held_refusal(tx: UnitOfWork, operation_id: str, kind: LeaseKindName) -> DponeError:
    """``journal.lease_held`` naming the live holder of ``operation_id``'s ``kind`` lease and
    when it expires by the journal clock (the instant a takeover may start)."""
    stored = tx.one("check_lease", operation_id=operation_id, kind=kind)
    if stored is None:  # released between the refused take and this read: retrying takes it
        return DponeError(code="journal.lease_held", operation_id=operation_id,
                          message=f"another worker held the {kind} lease on {operation_id}; "
                          "it is free now: run the command again")
    return lease_held(tx, operation_id, kind, str(stored["holder"]),
                      tx.codec.moment(stored["expires_at"]))


def lease_held(tx: UnitOfWork, operation_id: str, kind: LeaseKindName, holder: str,
               expires_at: dt.datetime) -> DponeError:
    """The refusal of a live ``kind`` lease of ``holder`` on ``operation_id``."""
    remaining_s = max(0, math.ceil((expires_at - tx.now()).total_seconds()))
    expires = iso_utc(expires_at)
    return DponeError(
        code="journal.lease_held", operation_id=operation_id,
        message=f"{holder!r} holds the {kind} lease on {operation_id} until {expires} "
        f"(journal clock, {remaining_s} s from now)",
        hint=f"Wait until {expires} (about {remaining_s} s) for the lease to expire, or for "
        f"{holder!r} to finish, then run the command again.",
        details={"holder": holder, "lease_kind": kind, "expires_at": expires,
                 "expires_in_s": remaining_s})


def admitted_lease_refusal(tx: UnitOfWork, tenancy: Tenancy, plan_digest: str,
                           boundary_from: dt.date, boundary_to: dt.date) -> DponeError | None:
    """``journal.lease_held`` when a delivery of ``plan_digest`` over exactly this boundary was
    admitted and one of its children holds a live mutation lease (the one expiring last), else
    None: a rerun can stop on it before freezing or sealing anything."""
    stored = tx.one("admitted_mutation_lease", operation_namespace=tenancy.operation_namespace,
                    tenant_id=tenancy.tenant_id, plan_digest=plan_digest,
                    boundary_from=boundary_from, boundary_to=boundary_to)
    if stored is None:
        return None
    return lease_held(tx, str(stored["operation_id"]), "mutation", str(stored["holder"]),
                      tx.codec.moment(stored["expires_at"]))


def check_submit_holder(tx: UnitOfWork, row: ChildRow, lease: Lease,
                        latest: AttemptRow | Unread | None = UNREAD) -> AttemptRow | None:
    """After SUBMITTING only the lease that submitted records its outcome or replays.

    Returns the latest attempt when the check applies (a mutation lease on a SUBMITTING
    tuple), else None. ``latest``: the latest attempt as this transaction read it with
    ``row`` (None: there is none), instead of reading it again.
    """
    if lease.kind != "mutation" or not row.submitting:
        return None
    if isinstance(latest, Unread):
        stored = tx.one("latest_attempt", operation_id=row.operation_id)
        latest = AttemptRow.decode(stored) if stored is not None else None
    attempt = latest
    if attempt is None or (attempt.lease_holder, attempt.lease_token) != (
            lease.holder, lease.token):
        raise DponeError(code="journal.lease_lost", operation_id=row.operation_id,
                         message="another mutation lease entered SUBMITTING for this attempt; "
                         "a takeover is observation or reconciliation only")
    return attempt


def live_leases(tx: UnitOfWork, parent_id: str) -> tuple[Lease, ...]:
    """The unexpired leases on the delivery ``parent_id`` and its children (ids
    ``<parent>_NNNN``; ``_`` escaped in the pattern), soonest expiry first."""
    return tuple(Lease(operation_id=str(row["operation_id"]), kind=row["kind"],
                       holder=str(row["holder"]), token=int(row["token"]),
                       expires_at=tx.codec.moment(row["expires_at"]))
                 for row in tx.all("live_leases_of_parent", parent_id=parent_id,
                                   children=f"{parent_id}\\_%"))
