"""The planner's building blocks: sizes, the oracle protocol, limits, day offsets and spans.

Pure data and integer arithmetic; :mod:`dpone.plans._planner` holds the window algorithm.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from dpone.contracts import DponeError
from dpone.contracts.children import DaySlice
from dpone.contracts.profile import Limits


@dataclass(frozen=True, slots=True)
class Measured:
    """Sizes of one sealed payload: decoded (before compression) and complete wire body."""

    decoded_bytes: int
    wire_bytes: int


class SizeOracle(Protocol):
    """Sizes of the sealed payload of parent rows ``[first_row, first_row + row_count)``.

    ``estimate`` is cheap and may be inexact (in either direction); the planner uses it only
    for the per-day sizes from which it proposes windows. It must be deterministic for the
    same parent and interval, and should be roughly additive over adjacent intervals.

    ``measure`` is exact for the payload the sealer will publish for that interval (the wire
    size is the complete emitted request body); only an exactly measured interval is ever
    accepted as a child, checked against the planning and hard limits. ``row_count`` may be
    0: a window whose days hold no rows is still a child and its payload has no data rows.
    """

    def estimate(self, first_row: int, row_count: int) -> Measured: ...

    def measure(self, first_row: int, row_count: int) -> Measured: ...


def _checked(size: Measured, what: str, first_row: int, row_count: int) -> Measured:
    for value in (size.decoded_bytes, size.wire_bytes):
        if type(value) is not int or value < 0:
            raise ValueError(f"size oracle {what} returned {size!r} for rows "
                             f"[{first_row}, {first_row + row_count}); "
                             "expected non-negative integers")
    return size


class Sizes:
    """The oracle behind a cache: one row interval is measured exactly at most once per plan."""

    def __init__(self, oracle: SizeOracle) -> None:
        self._oracle = oracle
        self._known: dict[tuple[int, int], Measured] = {}

    def estimate(self, first_row: int, row_count: int) -> Measured:
        return _checked(self._oracle.estimate(first_row, row_count), "estimate", first_row,
                        row_count)

    def __call__(self, first_row: int, row_count: int) -> Measured:
        key = (first_row, row_count)
        known = self._known.get(key)
        if known is None:
            known = _checked(self._oracle.measure(first_row, row_count), "measure", first_row,
                             row_count)
            self._known[key] = known
        return known


@dataclass(frozen=True, slots=True)
class Caps:
    rows: int
    decoded_bytes: int
    wire_bytes: int

    def admits(self, rows: int, size: Measured) -> bool:
        return (rows <= self.rows and size.decoded_bytes <= self.decoded_bytes
                and size.wire_bytes <= self.wire_bytes)

    def exceeded(self, rows: int, size: Measured) -> list[str]:
        names = [("max_rows", rows, self.rows), ("max_decoded_bytes", size.decoded_bytes,
                 self.decoded_bytes), ("max_wire_bytes", size.wire_bytes, self.wire_bytes)]
        return [f"{name} {cap}" for name, value, cap in names if value > cap]


def planning_caps(limits: Limits) -> Caps:
    rows = limits.planning_rows if limits.planning_rows is not None else limits.max_rows
    return Caps(rows, limits.planning_decoded_bytes, limits.planning_wire_bytes)


def hard_caps(limits: Limits) -> Caps:
    return Caps(limits.max_rows, limits.max_decoded_bytes, limits.max_wire_bytes)


@dataclass(frozen=True, slots=True)
class Span:
    """A chosen child before numbering: day indexes ``[day_from, day_to)`` and its rows."""

    day_from: int
    day_to: int
    first_row: int
    row_count: int
    size: Measured
    part: int = 1
    parts: int = 1


class Parent:
    """Per-day row offsets of the boundary (days absent from the slices have no rows)."""

    def __init__(self, boundary_from: dt.date, boundary_to: dt.date,
                 days: Sequence[DaySlice], total_rows: int) -> None:
        self.boundary_from = boundary_from
        self.n_days = (boundary_to - boundary_from).days
        counts = [0] * self.n_days
        for day in days:
            counts[(day.day - boundary_from).days] = day.row_count
        self.counts = counts
        self.starts = [0] * (self.n_days + 1)
        for index, count in enumerate(counts):
            self.starts[index + 1] = self.starts[index] + count
        self.total_rows = total_rows

    def date(self, index: int) -> dt.date:
        return self.boundary_from + dt.timedelta(days=index)

    def rows(self, day_from: int, day_to: int) -> tuple[int, int]:
        return self.starts[day_from], self.starts[day_to] - self.starts[day_from]

    def prefix_sizes(self, estimate: Callable[[int, int], Measured]) -> tuple[list[int], list[int]]:
        """Running sums of the estimated decoded and wire bytes of the days with rows."""
        decoded, wire = [0] * (self.n_days + 1), [0] * (self.n_days + 1)
        for index, count in enumerate(self.counts):
            size = estimate(self.starts[index], count) if count else Measured(0, 0)
            decoded[index + 1] = decoded[index] + size.decoded_bytes
            wire[index + 1] = wire[index] + size.wire_bytes
        return decoded, wire


def scope_error(what: str, rows: int, size: Measured, exceeded: list[str],
                details: dict[str, object]) -> DponeError:
    return DponeError(
        code="REST_DELIVERY_SCOPE_EXCEEDS_LIMIT",
        message=(f"{what} holds {rows} rows, {size.decoded_bytes} decoded bytes and "
                 f"{size.wire_bytes} wire bytes, over {', '.join(exceeded)}"),
        details={**details, "rows": rows, "decoded_bytes": size.decoded_bytes,
                 "wire_bytes": size.wire_bytes, "exceeded": exceeded},
    )
