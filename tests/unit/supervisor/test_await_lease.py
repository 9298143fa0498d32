"""Waiting for a lost run's lease: an expiring lease is waited for (and each wait announced);
a holder that keeps renewing is refused with ``journal.lease_held`` after one TTL, never waited
for forever."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import Lease
from dpone.executor.supervisor import await_lease

TTL = LeasePolicy(ttl_s=10, heartbeat_s=3)


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.t

    def now(self) -> dt.datetime:
        return dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=self.t)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds


class _Journal:
    """A lease held until ``expires`` (clock seconds); a renewing holder moves it on."""

    def __init__(self, clock: _Clock, expires: float, *, renews: bool) -> None:
        self.clock, self.expires, self.renews = clock, expires, renews
        self.released: list[Lease] = []

    def acquire_lease(self, operation_id: str, kind: Any, holder: str, ttl: int) -> Lease:
        if self.renews:
            self.expires = self.clock.t + TTL.ttl_s
        if self.clock.t < self.expires:
            raise DponeError(code="journal.lease_held", message="held",
                             details={"holder": "lost-run", "expires_at": "T",
                                      "expires_in_s": int(self.expires - self.clock.t + 0.999)})
        return Lease(operation_id=operation_id, kind=kind, holder=holder, token=2,
                     expires_at=self.clock.now())

    def release_lease(self, lease: Lease) -> None:
        self.released.append(lease)


def test_an_expiring_lease_is_waited_for_and_announced() -> None:
    clock = _Clock()
    journal = _Journal(clock, expires=7, renews=False)
    told: list[tuple[str, str, int]] = []

    await_lease(journal, "op_1", "mutation", holder="me", leases=TTL, clock=clock,  # type: ignore[arg-type]
                on_wait=lambda op, who, until, left: told.append((op, who, left)))

    assert told == [("op_1", "lost-run", 7)]
    assert clock.t >= 7 and len(journal.released) == 1


def test_a_renewing_holder_is_refused_after_one_ttl() -> None:
    clock = _Clock()
    journal = _Journal(clock, expires=5, renews=True)

    with pytest.raises(DponeError) as refused:
        await_lease(journal, "op_1", "mutation", holder="me", leases=TTL, clock=clock)  # type: ignore[arg-type]

    assert refused.value.code == "journal.lease_held"
    assert clock.t <= TTL.ttl_s + 2
