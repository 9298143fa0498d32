"""The receiver account's distributed rate limits, taken through the journal before each request.

Every process that sends to one receiver account (the binding's canonical authority origin and
its ``remote_principal_id``) shares one journal bucket per request kind and one set of
active-request slots (:mod:`dpone.contracts.rate`):

* before each submit request (a first attempt, a retry, a same-key replay) a submit turn at
  ``rate.submit_per_minute`` and one of ``rate.max_active_requests`` slots, in one journal
  transaction, taken before the attempt's MAY_ATTEMPT marker and its SUBMITTING transaction (a
  wait never happens in SUBMITTING, and a child stopped here provably sent nothing); the slot is
  held under the child's mutation lease until its submit ends (the response recorded) or it
  backs off to send again;
* before each receipt poll a poll turn at ``rate.poll_per_minute``.

The wait the journal returns is slept on the worker's clock, bounded by the submit budget
(``retry.submit.budget_s`` of this submit) or by the observation's ``operation_total_s``; a turn
further away than that is not taken and the submit stops with ``receiver.rate_limited``
(nothing sent, the child waits for the next run), the observation returns still observing.
"""

from __future__ import annotations

import random
from typing import Final

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, Lease
from dpone.contracts.rate import (
    ActiveClaim,
    ActiveSlot,
    RateKind,
    RateScope,
    RateTurn,
    RateTurnRequest,
)
from dpone.executor.supervisor._context import Run

SLOT_RETRY_S: Final = (0.02, 0.2)
"""How long a submit waits, jittered, before asking again while every active-request slot of
its receiver account is held."""


def rate_limited(operation: ChildOperation, kind: RateKind | None, wait_s: float,
                 remaining_s: float, scope: RateScope) -> DponeError:
    """The stop of a submit whose turn (``kind``) or active-request slot (``kind`` None) does
    not come within its budget: nothing was sent."""
    limit = (f"{kind}_per_minute" if kind is not None else "max_active_requests")
    waited = (f"its next submit turn is {wait_s:.1f} s away" if kind is not None
              else "every active-request slot stayed held")
    return DponeError(
        code="receiver.rate_limited", operation_id=operation.operation_id,
        message=f"the receiver account {scope.authority} ({scope.principal}) is at its shared "
        f"rate.{limit}: {waited}, beyond the {max(remaining_s, 0.0):.1f} s left of the submit "
        "budget; nothing was sent and the child waits for the next run",
        details={"rate_limit": limit, "authority": scope.authority,
                 "principal": scope.principal, "wait_s": round(wait_s, 3),
                 "remaining_budget_s": round(max(remaining_s, 0.0), 3)})


class SubmitTurns:
    """The submit turns and active-request slot of one child's submit loop: :meth:`take` before
    each request, :meth:`release` when the loop backs off to send again."""

    def __init__(self, run: Run, started: float) -> None:
        self._run = run
        self._started = started
        self._slot: ActiveSlot | None = None
        self._begun: RateTurn | None = None
        self._rng = random.Random()

    def _remaining(self) -> float:
        budget = self._run.plan.profile.snapshot.retry.submit.budget_s
        return budget - (self._run.clock.monotonic() - self._started)

    def request(self, operation_id: str, lease_token: int | None = None) -> RateTurnRequest:
        """The submit turn and slot of child ``operation_id`` within the budget left; with no
        ``lease_token`` the slot is claimed on the lease ``begin_attempt`` takes."""
        writer = self._run.writer
        profile = self._run.plan.profile.snapshot
        claim = ActiveClaim(max_active=profile.rate.max_active_requests, holder=writer.holder,
                            operation_id=operation_id, lease_token=lease_token,
                            hold_s=float(profile.timeouts.request_total_s + writer.leases.ttl_s))
        return RateTurnRequest(scope=self._run.scope, kind="submit",
                               per_minute=profile.rate.submit_per_minute,
                               max_wait_s=max(self._remaining(), 0.0), active=claim)

    def begun(self, turn: RateTurn | None) -> None:
        """The turn ``begin_attempt`` took with the lease: the first :meth:`take` uses it when
        granted (no transaction of its own); otherwise that take asks again."""
        self._begun = turn

    def take(self, operation: ChildOperation, lease: Lease) -> None:
        """Wait for this account's next submit turn and an active-request slot (held under the
        child's mutation ``lease``), or raise ``receiver.rate_limited`` past the budget."""
        run = self._run
        begun, self._begun = self._begun, None
        while True:
            if begun is not None and begun.outcome == "granted":
                turn, begun = begun, None  # taken with the lease: nothing to wait for or ask
            else:
                begun, remaining = None, self._remaining()
                turn = run.writer.take_rate_turn(self.request(lease.operation_id, lease.token))
            if turn.outcome == "granted":
                self._slot = turn.slot
                if turn.wait_s > 0:
                    run.telemetry.waited("submit", turn.wait_s)
                    run.clock.sleep(turn.wait_s)
                return
            if turn.outcome == "beyond_budget":
                raise rate_limited(operation, "submit", turn.wait_s, remaining, self._run.scope)
            pause = self._rng.uniform(*SLOT_RETRY_S)
            if pause > remaining:
                raise rate_limited(operation, None, pause, remaining, self._run.scope)
            run.telemetry.waited("submit", pause)
            run.clock.sleep(pause)

    def release(self) -> None:
        """Free the held slot now, if any (one that cannot be freed ends with the lease)."""
        slot, self._slot = self._slot, None
        if slot is not None:  # one that cannot be freed now ends with the mutation lease
            self._run.writer.release_active_slot(slot)


def take_poll_turn(run: Run, deadline: float) -> bool:
    """Wait for this account's next poll turn; False (nothing taken) when it comes after the
    observation's ``deadline`` (the worker's monotonic clock)."""
    remaining = deadline - run.clock.monotonic()
    turn = run.writer.take_rate_turn(RateTurnRequest(
        scope=run.scope, kind="poll",
        per_minute=run.plan.profile.snapshot.rate.poll_per_minute,
        max_wait_s=max(remaining, 0.0)))
    if turn.outcome != "granted":
        return False
    if turn.wait_s > 0:
        run.telemetry.waited("poll", turn.wait_s)
        run.clock.sleep(turn.wait_s)
    return True
