"""Distributed rate limits of a receiver account: request turns and active-request slots.

A profile's ``rate.submit_per_minute``, ``rate.poll_per_minute`` and
``rate.max_active_requests`` bound what every process sending to one receiver account does
together, not what one process does. The journal keeps the shared state (its database clock
decides every time):

* one **bucket** per (authority, principal, kind) for ``submit`` and ``poll`` turns: a token
  bucket of one token refilled every ``60 / per_minute`` seconds, kept as the earliest time of
  the next turn. Taking a turn moves that time one interval on, so turns of a scope are at
  least one interval apart by the database clock whichever process takes them, and no window
  of 60 seconds holds more than ``per_minute`` turns;
* numbered **active-request slots** 1..``max_active_requests`` per (authority, principal): a
  submit holds one from its turn until its response is read, tied to its mutation lease (by
  the database clock), so a killed process frees its slot when that lease expires.

A turn and its slot are taken in one journal transaction (:class:`RateTurnRequest`); the
answer says how long to wait before sending (:class:`RateTurn`).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Final, Literal

from pydantic import Field

from dpone.contracts._base import StrictModel

RateKind = Literal["submit", "poll"]
MAX_ACTIVE_SLOTS: Final = 64
SECONDS_PER_MINUTE: Final = 60.0


class RateScope(StrictModel):
    """Whose limit it is: the receiver's canonical origin and the remote principal."""

    authority: Annotated[str, Field(min_length=1, max_length=512)]
    principal: Annotated[str, Field(min_length=1, max_length=128)]


class ActiveClaim(StrictModel):
    """A submit's claim on one of the scope's active-request slots, taken under the child's
    live mutation lease (``operation_id``, ``lease_token``): the slot is held while that lease
    is (the run's heartbeat renews it), so a killed process frees it when its lease expires."""

    max_active: Annotated[int, Field(ge=1, le=MAX_ACTIVE_SLOTS)]
    holder: Annotated[str, Field(min_length=1, max_length=256)]
    operation_id: Annotated[str, Field(min_length=1)]
    lease_token: Annotated[int, Field(ge=1)] | None = None
    """The mutation lease's token; None only inside ``begin_attempt``, where the claim is on the
    lease that same transaction takes."""
    hold_s: Annotated[float, Field(gt=0)]
    """The slot's bound past its turn even while the lease lives (the request's total time
    bound plus a lease's length): a slot never released is free again after it."""


class RateTurnRequest(StrictModel):
    """One request turn of ``kind`` in ``scope`` at ``per_minute``; with ``active`` (submits)
    one active-request slot too. Nothing is taken when the turn would come later than
    ``max_wait_s`` from now, or when every slot is held."""

    scope: RateScope
    kind: RateKind
    per_minute: Annotated[int, Field(ge=1)]
    max_wait_s: Annotated[float, Field(ge=0)]
    active: ActiveClaim | None = None

    @property
    def interval_s(self) -> float:
        """Seconds between two turns of this kind in the scope."""
        return SECONDS_PER_MINUTE / self.per_minute


class ActiveSlot(StrictModel):
    """A held active-request slot; ``token`` fences a holder whose slot expired and was taken."""

    scope: RateScope
    slot: Annotated[int, Field(ge=1, le=MAX_ACTIVE_SLOTS)]
    holder: str
    token: Annotated[int, Field(ge=1)]


class RateTurn(StrictModel):
    """The journal's answer to a :class:`RateTurnRequest`.

    ``granted``: the turn (and the slot, for a submit) is taken; send after ``wait_s``.
    ``beyond_budget``: the next turn is ``wait_s`` away, more than ``max_wait_s``; nothing
    taken. ``slots_busy``: every active-request slot is held; nothing taken.
    """

    outcome: Literal["granted", "beyond_budget", "slots_busy"]
    wait_s: Annotated[float, Field(ge=0)]
    turn_at: dt.datetime
    """The turn's time by the database clock (the next free turn when nothing was taken)."""
    slot: ActiveSlot | None = None
