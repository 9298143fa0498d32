"""Retry timing for an already permitted retry: Retry-After, full jitter and the budget rule.

Whether a retry is permitted at all is not decided here (see the transport phase and the
remote-fence predicate). Here: the delay is full jitter in
``[0, min(max_delay, initial * 2**attempt)]``; a valid Retry-After is a lower bound; when the
server's full delay exceeds the remaining budget the answer is :class:`BudgetExceeded` (the
caller raises ``REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET``): the server's delay is never
truncated. Only our own jitter is clipped to the budget.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from dpone.contracts.profile import Backoff

RETRY_AFTER_EXCEEDS_BUDGET: Final = "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET"
MAX_DELTA_SECONDS: Final = 2_147_483_648
"""RFC 9111 section 1.2.2: a delta that overflows is taken as 2**31."""

_DELTA: Final = re.compile(r"[0-9]{1,64}")
_MONTHS: Final = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                  "Dec")
_DAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_LONG_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                     "Sunday")
_TIME: Final = r"([0-9]{2}):([0-9]{2}):([0-9]{2})"
_MON: Final = "(" + "|".join(_MONTHS) + ")"
_IMF_FIXDATE: Final = re.compile(
    r"(" + "|".join(_DAYS) + r"), ([0-9]{2}) " + _MON + r" ([0-9]{4}) " + _TIME + " GMT")
_RFC850: Final = re.compile(
    r"(" + "|".join(_LONG_DAYS) + r"), ([0-9]{2})-" + _MON + r"-([0-9]{2}) " + _TIME + " GMT")
_ASCTIME: Final = re.compile(
    r"(" + "|".join(_DAYS) + r") " + _MON + r" ([ 0-9][0-9]) " + _TIME + r" ([0-9]{4})")


@dataclass(frozen=True, slots=True)
class BudgetExceeded:
    """The server asks for more time than the budget has left; never retry earlier."""

    retry_after_s: float
    remaining_budget_s: float
    code: str = RETRY_AFTER_EXCEEDS_BUDGET


def retry_after_seconds(headers: Mapping[str, str], now: dt.datetime) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (RFC 9110 section 10.2.3), or ``None``.

    Accepts delta-seconds and the three HTTP-date forms (IMF-fixdate, obsolete RFC 850 and
    asctime). A date in the past gives ``0.0``. Anything else, including a negative or
    fractional delta, is invalid: ``None``. ``now`` must be timezone-aware.
    """
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    if value is None:
        return None
    value = value.strip()
    if _DELTA.fullmatch(value):
        return float(min(int(value), MAX_DELTA_SECONDS))
    when = parse_http_date(value, now)
    if when is None:
        return None
    return max((when - now).total_seconds(), 0.0)


def parse_http_date(value: str, now: dt.datetime) -> dt.datetime | None:
    """An HTTP-date as an aware UTC datetime, or ``None`` when it is not one (or impossible)."""
    fields: tuple[int, int, int, int, int, int]
    if match := _IMF_FIXDATE.fullmatch(value):
        _, day, mon, year, hh, mm, ss = match.groups()
        fields = (int(year), _MONTHS.index(mon) + 1, int(day), int(hh), int(mm), int(ss))
    elif match := _RFC850.fullmatch(value):
        _, day, mon, yy, hh, mm, ss = match.groups()
        fields = (_two_digit_year(int(yy), now), _MONTHS.index(mon) + 1, int(day), int(hh),
                  int(mm), int(ss))
    elif match := _ASCTIME.fullmatch(value):
        _, mon, day, hh, mm, ss, year = match.groups()
        fields = (int(year), _MONTHS.index(mon) + 1, int(day.strip()), int(hh), int(mm), int(ss))
    else:
        return None
    year, month, day_n, hour, minute, second = fields
    try:
        return dt.datetime(year, month, day_n, hour, minute, min(second, 59), tzinfo=dt.UTC)
    except ValueError:
        return None


def _two_digit_year(yy: int, now: dt.datetime) -> int:
    """RFC 9110 section 5.6.7: a year more than 50 years in the future is in the past century."""
    century = now.year - now.year % 100
    year = century + yy
    return year - 100 if year > now.year + 50 else year


def full_jitter_delay(attempt: int, initial: float, max_delay: float,
                      rng: random.Random) -> float:
    """``uniform(0, min(max_delay, initial * 2**attempt))``; ``attempt`` counts from 0."""
    if attempt < 0 or initial < 0 or max_delay < 0:
        raise ValueError("attempt, initial and max_delay must be non-negative")
    ceiling = max_delay if attempt >= 1000 else min(max_delay, initial * 2.0 ** attempt)
    return rng.uniform(0.0, ceiling)


def next_delay(attempt: int, backoff: Backoff, retry_after: float | None,
               remaining_budget: float, rng: random.Random) -> float | BudgetExceeded:
    """The delay before retry ``attempt`` (0-based), or :class:`BudgetExceeded`.

    ``BudgetExceeded`` exactly when ``retry_after > remaining_budget``. Otherwise the delay is
    ``max(retry_after, min(jitter, remaining))``: never earlier than the server allows, and our
    own jitter never spends more than the budget left.
    """
    if retry_after is not None and retry_after > remaining_budget:
        return BudgetExceeded(retry_after_s=retry_after, remaining_budget_s=remaining_budget)
    jitter = full_jitter_delay(attempt, float(backoff.initial_delay_s),
                               float(backoff.max_delay_s), rng)
    delay = min(jitter, max(remaining_budget, 0.0))
    return delay if retry_after is None else max(retry_after, delay)
