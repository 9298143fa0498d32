"""Retry-After parsing, full jitter and the never-truncate budget rule."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpone.contracts.profile import Backoff
from dpone.executor.transport import (
    RETRY_AFTER_EXCEEDS_BUDGET,
    BudgetExceeded,
    full_jitter_delay,
    next_delay,
    retry_after_seconds,
)

NOW = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(("value", "expected"), [
    ("0", 0.0),
    ("120", 120.0),
    ("  7 ", 7.0),
    ("99999999999999999999", 2_147_483_648.0),
    ("Mon, 30 Nov 2026 12:01:30 GMT", 90.0),
    ("Monday, 30-Nov-26 12:00:10 GMT", 10.0),
    ("Mon Nov 30 12:00:05 2026", 5.0),
    ("Mon Nov  2 12:00:00 2026", 0.0),
    ("Sun, 06 Nov 1994 08:49:37 GMT", 0.0),
    ("Mon, 30 Nov 2026 11:59:59 GMT", 0.0),
])
def test_valid_retry_after(value: str, expected: float) -> None:
    assert retry_after_seconds({"retry-after": value}, NOW) == expected


@pytest.mark.parametrize("value", [
    "", "-5", "1.5", "soon", "+5", "0x10", "Mon, 30 Nov 2026 12:01:30 UTC",
    "Mon, 31 Nov 2026 12:00:00 GMT", "Mon, 30 Nov 2026 25:00:00 GMT", "30 Nov 2026 12:00:00 GMT",
    "Mon, 30 Foo 2026 12:00:00 GMT", "5 seconds",
])
def test_invalid_retry_after_is_none(value: str) -> None:
    assert retry_after_seconds({"retry-after": value}, NOW) is None


def test_header_lookup_is_case_insensitive_and_absent_is_none() -> None:
    assert retry_after_seconds({"Retry-After": "3"}, NOW) == 3.0
    assert retry_after_seconds({}, NOW) is None


def test_rfc850_two_digit_year_rolls_back_a_century_when_far_future() -> None:
    assert retry_after_seconds({"retry-after": "Sunday, 06-Nov-94 08:49:37 GMT"}, NOW) == 0.0


def test_full_jitter_is_within_the_capped_exponential_window() -> None:
    rng = random.Random(20261130)
    for attempt in range(12):
        ceiling = min(60.0, 1.0 * 2 ** attempt)
        samples = [full_jitter_delay(attempt, 1.0, 60.0, rng) for _ in range(200)]
        assert all(0.0 <= s <= ceiling for s in samples)
        assert max(samples) > ceiling * 0.8  # the whole window is used
    assert full_jitter_delay(10_000, 1.0, 60.0, rng) <= 60.0
    with pytest.raises(ValueError):
        full_jitter_delay(-1, 1.0, 60.0, rng)


def test_full_jitter_is_reproducible_with_a_seed() -> None:
    first = [full_jitter_delay(a, 0.5, 30.0, random.Random(7)) for a in range(5)]
    again = [full_jitter_delay(a, 0.5, 30.0, random.Random(7)) for a in range(5)]
    assert first == again


def test_budget_exceeded_carries_the_catalog_code() -> None:
    backoff = Backoff(max_attempts=5, initial_delay_s=1, max_delay_s=60, budget_s=600)
    outcome = next_delay(0, backoff, retry_after=120.0, remaining_budget=119.5,
                         rng=random.Random(1))
    assert outcome == BudgetExceeded(retry_after_s=120.0, remaining_budget_s=119.5)
    assert isinstance(outcome, BudgetExceeded) and outcome.code == RETRY_AFTER_EXCEEDS_BUDGET
    assert next_delay(0, backoff, 120.0, 120.0, random.Random(1)) == 120.0


@given(attempt=st.integers(0, 200),
       initial=st.integers(0, 120), max_delay=st.integers(0, 3600),
       retry_after=st.none() | st.floats(0, 10_000, allow_nan=False),
       remaining=st.floats(-10, 10_000, allow_nan=False), seed=st.integers(0, 2**32))
def test_next_delay_never_earlier_than_retry_after(attempt: int, initial: int, max_delay: int,
                                                  retry_after: float | None, remaining: float,
                                                  seed: int) -> None:
    backoff = Backoff(max_attempts=10, initial_delay_s=initial, max_delay_s=max_delay)
    outcome = next_delay(attempt, backoff, retry_after, remaining, random.Random(seed))
    exceeds = retry_after is not None and retry_after > remaining
    assert isinstance(outcome, BudgetExceeded) == exceeds
    if isinstance(outcome, BudgetExceeded):
        assert outcome.retry_after_s == retry_after
        return
    ceiling = min(max_delay, initial * 2.0 ** min(attempt, 1000))
    assert outcome >= (retry_after or 0.0)
    assert outcome >= 0.0
    if retry_after is None:
        assert outcome <= min(ceiling, max(remaining, 0.0))
    else:
        assert outcome <= max(retry_after, min(ceiling, remaining))
        assert outcome <= remaining
