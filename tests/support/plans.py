"""Test oracle and builders for the planner suites (synthetic per-row sizes, no codecs).

The oracle is deliberately non-additive: decoded bytes are a header plus the rows' sizes (plus,
for the superadditive variant, a term quadratic in the row count, so a window is larger than
the sum of its days); wire bytes are ``ceil(decoded * num / den)`` plus a fixed multipart
envelope. It is monotone: adding rows to an interval never makes it smaller.

Its ``estimate`` is the exact size scaled by a factor ``num/den`` picked from
``estimate_factors`` by the interval (so estimates can be off in either direction, differently
for each day, and are still deterministic). ``calls`` records exact measurements only and
``estimates`` the estimates.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from dpone.contracts.children import ChildDescriptor, DaySlice
from dpone.contracts.plan import EffectiveLimits
from dpone.contracts.profile import WindowDays
from dpone.plans import Measured

AUGUST = dt.date(2026, 8, 1)


@dataclass
class RowOracle:
    row_sizes: Sequence[int]
    header: int = 64
    num: int = 1
    den: int = 3
    envelope: int = 300
    quadratic_div: int = 0
    estimate_factors: Sequence[tuple[int, int]] = ((1, 1),)
    calls: list[tuple[int, int]] = field(default_factory=list)
    estimates: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        prefix = [0]
        for size in self.row_sizes:
            prefix.append(prefix[-1] + size)
        self._prefix = prefix

    def exact(self, first_row: int, row_count: int) -> Measured:
        if first_row < 0 or row_count < 0 or first_row + row_count > len(self.row_sizes):
            raise IndexError(f"rows [{first_row}, {first_row + row_count}) out of range")
        decoded = self.header + self._prefix[first_row + row_count] - self._prefix[first_row]
        if self.quadratic_div:
            decoded += row_count * row_count // self.quadratic_div
        wire = -(-decoded * self.num // self.den) + self.envelope
        return Measured(decoded_bytes=decoded, wire_bytes=wire)

    def guess(self, first_row: int, row_count: int) -> Measured:
        """The estimate, without recording a call."""
        exact = self.exact(first_row, row_count)
        num, den = self.estimate_factors[(first_row * 7 + row_count) % len(self.estimate_factors)]
        return Measured(decoded_bytes=exact.decoded_bytes * num // den,
                        wire_bytes=exact.wire_bytes * num // den)

    def estimate(self, first_row: int, row_count: int) -> Measured:
        self.estimates.append((first_row, row_count))
        return self.guess(first_row, row_count)

    def measure(self, first_row: int, row_count: int) -> Measured:
        self.calls.append((first_row, row_count))
        return self.exact(first_row, row_count)


def day_slices(start: dt.date, counts: Sequence[int]) -> tuple[list[DaySlice], int]:
    """Slices for the days of ``counts`` (index = day offset) that have rows; and the total."""
    days: list[DaySlice] = []
    row = 0
    for offset, count in enumerate(counts):
        if count:
            days.append(DaySlice(day=start + dt.timedelta(days=offset), first_row=row,
                                 row_count=count))
            row += count
    return days, row


def row_sizes(total: int, seed: int, low: int = 20, high: int = 200) -> list[int]:
    """``total`` pseudo-random row sizes in ``[low, high]`` (fast: one random byte per row)."""
    span = high - low
    return [low + byte * span // 255 for byte in random.Random(seed).randbytes(total)]


def limits(*, max_rows: int, max_decoded: int, max_wire: int, planning_pct: int = 80,
           planning_rows: int | None = None, window: tuple[int, int, int] = (3, 1, 7)) -> EffectiveLimits:
    default, low, high = window
    return EffectiveLimits(
        max_rows=max_rows,
        planning_rows=planning_rows,
        max_decoded_bytes=max_decoded,
        planning_decoded_bytes=max(1, max_decoded * planning_pct // 100),
        max_wire_bytes=max_wire,
        planning_wire_bytes=max(1, max_wire * planning_pct // 100),
        preferred_window_days=WindowDays(default=default, min=low, max=high),
        window_days=default,
    )


def example_counts(start: dt.date = AUGUST, n_days: int = 31) -> list[int]:
    """The sample dataset's volume: weekday 110, weekend 40, mid-month 240, one day with 3."""
    counts = []
    for offset in range(n_days):
        day = start + dt.timedelta(days=offset)
        count = 40 if day.weekday() >= 5 else 110
        if 14 <= day.day <= 16:
            count = 240
        if day.day == 23:
            count = 3
        counts.append(count)
    return counts


def scope_groups(children: Sequence[ChildDescriptor]) -> list[list[ChildDescriptor]]:
    """Consecutive children with the same scope (the parts of one split scope)."""
    return [list(group) for _, group in
            itertools.groupby(children, key=lambda c: (c.scope_from, c.scope_to))]
