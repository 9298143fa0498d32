"""Distributed rate limits: request turns and active-request slots in one short transaction.

A bucket row of (authority, principal, kind) holds the earliest time of its next turn. Taking a
turn locks that row (PostgreSQL: the upsert's row lock, held to commit; SQLite: ``BEGIN
IMMEDIATE`` holds the whole file), reads the database clock after the lock, and moves the next
turn to ``max(next_turn_at, now) + 60 / per_minute``: whichever process asks, two turns of a
scope are at least one interval apart by the database clock. A submit also claims the lowest
free active-request slot in the same transaction, under the same lock (so no two claims of a
scope interleave between the read of the live slots and the claim); when none is free, or when
its turn would come later than the caller can wait, nothing is taken. A slot is live while its
mutation lease is: releasing that lease (the end of the child's submit) releases the slot with
no transaction of its own, and a killed process frees it when the lease expires.
"""

from __future__ import annotations

import datetime as dt

from dpone.contracts._errors import DponeError
from dpone.contracts.rate import ActiveSlot, RateScope, RateTurn, RateTurnRequest
from dpone.journal._unit import UnitOfWork


def _key(scope: RateScope) -> dict[str, str]:
    return {"authority": scope.authority, "principal": scope.principal}


def take_turn(tx: UnitOfWork, request: RateTurnRequest) -> RateTurn:
    """Take the next turn of ``request.kind`` in its scope (and a slot, for a submit) or, when it
    cannot, say why and take nothing."""
    key = _key(request.scope)
    row = tx.one("lock_rate_bucket", kind=request.kind, **key)
    if row is None:
        raise DponeError(code="journal.unavailable", message="the rate bucket is missing")
    now = tx.codec.moment(row["now"])
    turn_at = max(tx.codec.moment(row["next_turn_at"]), now)
    wait_s = (turn_at - now).total_seconds()
    if wait_s > request.max_wait_s:
        return RateTurn(outcome="beyond_budget", wait_s=wait_s, turn_at=turn_at)
    slot: ActiveSlot | None = None
    active = request.active
    if active is not None:
        live = tx.all("live_active_slots", **key)
        # A child has one request at a time: a slot it still holds is the one it takes again.
        own = [int(row["slot"]) for row in live if row["operation_id"] == active.operation_id]
        held = {int(row["slot"]) for row in live}
        free = own or [slot for slot in range(1, active.max_active + 1) if slot not in held]
        if not free:
            return RateTurn(outcome="slots_busy", wait_s=wait_s, turn_at=turn_at)
        if active.lease_token is None:
            raise DponeError(code="journal.illegal_transition", operation_id=active.operation_id,
                             message="an active-request slot is claimed under a live mutation "
                             "lease: name its token")
        claimed = tx.one("claim_active_slot", slot=free[0], holder=active.holder,
                         operation_id=active.operation_id, lease_token=active.lease_token,
                         expires_at=turn_at + dt.timedelta(seconds=active.hold_s), **key)
        if claimed is None:
            raise DponeError(code="journal.unavailable", message="the slot claim returned no row")
        slot = ActiveSlot(scope=request.scope, slot=int(claimed["slot"]), holder=active.holder,
                          token=int(claimed["token"]))
    tx.run("advance_rate_bucket", kind=request.kind,
           next_turn_at=turn_at + dt.timedelta(seconds=request.interval_s), **key)
    return RateTurn(outcome="granted", wait_s=wait_s, turn_at=turn_at, slot=slot)


def release_slot(tx: UnitOfWork, slot: ActiveSlot) -> None:
    """Free ``slot`` now (a no-op once its lease expired and another holder took it)."""
    tx.run("release_active_slot", slot=slot.slot, holder=slot.holder, token=slot.token,
           **_key(slot.scope))
