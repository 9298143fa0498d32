"""The system clock: the :class:`~dpone.contracts.ports.Clock` adapter composition roots pass in.

``monotonic`` and ``sleep`` are the process's; ``now`` is the wall clock in aware UTC. Tests pass
a fake clock instead; the supervisor reads time only through the port.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpone.contracts.ports import Clock


class SystemClock:
    """The process's monotonic clock and sleep, and the wall clock in UTC."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@dataclass(frozen=True)
class SleepingWith:
    """``clock`` whose sleep is ``sleep`` (e.g. a test's recorder): time still passes as
    ``clock`` says."""

    clock: Clock
    sleep: Callable[[float], None]

    def monotonic(self) -> float:
        return self.clock.monotonic()

    def now(self) -> dt.datetime:
        return self.clock.now()


if TYPE_CHECKING:
    # Conformance is proved by the type checker.
    _system: Clock = SystemClock()
    _sleeping: Clock = SleepingWith(SystemClock(), time.sleep)

__all__ = ["SleepingWith", "SystemClock"]
