"""The supervisor reads time only through the Clock port: budgets, reported wall times, sleeps."""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path
from typing import Any, cast

import pytest

from dpone.compiler import compile_workload
from dpone.contracts.journal import ChildOperation
from dpone.contracts.ports import Clock
from dpone.contracts.transport import Response
from dpone.executor import supervisor
from dpone.executor.supervisor._context import RetryWait, Run, open_run, run_clock
from dpone.executor.supervisor._decide import retry_delay
from support.common import EXAMPLES

SUPERVISOR = Path(supervisor.__file__).parent
WALL = dt.datetime(2026, 8, 1, 12, 0, tzinfo=dt.UTC)


class FakeClock:
    """Time passes only when the test (or a sleep) says so."""

    def __init__(self) -> None:
        self.elapsed = 0.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.elapsed

    def now(self) -> dt.datetime:
        return WALL + dt.timedelta(seconds=self.elapsed)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.elapsed += seconds


def _context(clock: Clock, waits: list[RetryWait] | None = None) -> Run:
    plan = compile_workload(EXAMPLES / "workloads" / "measurements_sync.yaml", EXAMPLES).plan
    unused: Any = None  # neither the journal, the store nor the transport is reached here
    return open_run(plan, unused, unused, unused, holder="clock-test", clock=clock,
                    rng=random.Random(1), on_wait=None if waits is None else waits.append)


def _operation(attempt: int) -> ChildOperation:
    return ChildOperation.model_construct(operation_id="op-1", ordinal=1, attempt_ordinal=attempt)


@pytest.mark.parametrize("path", sorted(SUPERVISOR.glob("*.py")), ids=lambda path: path.name)
def test_the_supervisor_never_reads_the_system_clock(path: Path) -> None:
    source = path.read_text("utf-8")
    assert not re.search(r"^\s*import time\b|^\s*from time import", source, re.MULTILINE)
    assert not re.search(r"\btime\.(monotonic|sleep|time|perf_counter)\b", source)
    assert not re.search(r"datetime\.(now|utcnow|today)\(", source)


def test_a_retry_wait_is_reported_and_slept_on_the_runs_clock() -> None:
    clock, waits = FakeClock(), cast(list[RetryWait], [])
    ctx = _context(clock, waits)
    ctx.back_off(_operation(1), "submit", Response(status=503, headers={}, body=b""), 1, 2.5)
    assert clock.sleeps == [2.5]
    assert [(w.reason, w.delay_s, w.next_attempt_at) for w in waits] == [
        ("HTTP 503", 2.5, WALL + dt.timedelta(seconds=2.5))]


def test_the_submit_budget_is_measured_on_the_runs_clock() -> None:
    clock = FakeClock()
    ctx = _context(clock)
    budget = ctx.plan.profile.snapshot.retry.submit.budget_s
    started = clock.monotonic()
    backoff = ctx.plan.profile.snapshot.retry.submit

    def delay() -> object:  # as the submit measures its budget: on the run's clock
        return retry_delay(backoff, _operation(1).attempt_ordinal, ctx.clock.monotonic() - started,
                           None, ctx.rng)

    assert isinstance(delay(), float)
    clock.elapsed = budget + 1.0  # the budget is spent by this run's clock, not the system's
    assert delay() is None


def test_a_given_sleep_replaces_only_the_clocks_sleep() -> None:
    clock, slept = FakeClock(), cast(list[float], [])
    run = run_clock(clock, slept.append)
    clock.elapsed = 7.0
    run.sleep(3.0)
    assert (slept, clock.sleeps, run.monotonic(), run.now()) == (
        [3.0], [], 7.0, WALL + dt.timedelta(seconds=7))
    assert run_clock(clock, None) is clock
