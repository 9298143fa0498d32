"""The deterministic adaptive planner: one frozen parent -> ordered children + coverage proof.

Pure: no I/O. Sizes come from a :class:`SizeOracle` the caller (the sealer) implements with the
real codecs; it returns the exact decoded and wire sizes of the sealed payload for a row
interval. Encoding costs about as much as the rows it encodes, so the planner measures each
day with rows once, estimates windows additively from those per-day sizes, and then measures
each chosen child once to verify it; only a child that fails verification costs more (a binary
search of O(log) further measurements). Integer arithmetic only: the same inputs and
algorithm version always give the same plan.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from dpone.contracts import DponeError
from dpone.contracts.children import ChildDescriptor, ChildPlan, DaySlice
from dpone.contracts.plan import PLANNER_ALGORITHM_VERSION, EffectiveLimits
from dpone.contracts.profile import Limits
from dpone.plans._coverage import check_days, coverage_proof, verify_coverage

FIXED_WIDTH_ALGORITHM_VERSION: Final = "dpone.fixed_window_baseline.v1"
MUTATION_KINDS: Final = ("partition_replace", "incremental_append")


@dataclass(frozen=True, slots=True)
class Measured:
    """Exact sizes of one sealed payload: decoded (before compression) and complete wire body."""

    decoded_bytes: int
    wire_bytes: int


class SizeOracle(Protocol):
    """Measures the sealed payload of parent rows ``[first_row, first_row + row_count)``.

    The sizes must be exact for the payload the sealer will publish for that interval (the
    wire size is the complete emitted request body). ``row_count`` may be 0: a window whose
    days hold no rows is still a child and its payload has no data rows.
    """

    def measure(self, first_row: int, row_count: int) -> Measured: ...


@dataclass(frozen=True, slots=True)
class _Caps:
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


def _planning_caps(limits: Limits) -> _Caps:
    rows = limits.planning_rows if limits.planning_rows is not None else limits.max_rows
    return _Caps(rows, limits.planning_decoded_bytes, limits.planning_wire_bytes)


def _hard_caps(limits: Limits) -> _Caps:
    return _Caps(limits.max_rows, limits.max_decoded_bytes, limits.max_wire_bytes)


@dataclass(frozen=True, slots=True)
class _Span:
    """A chosen child before numbering: day indexes ``[day_from, day_to)`` and its rows."""

    day_from: int
    day_to: int
    first_row: int
    row_count: int
    size: Measured
    part: int = 1
    parts: int = 1


class _Measurements:
    """The oracle behind a cache: one row interval is measured at most once per plan."""

    def __init__(self, oracle: SizeOracle) -> None:
        self._oracle = oracle
        self._known: dict[tuple[int, int], Measured] = {}

    def __call__(self, first_row: int, row_count: int) -> Measured:
        key = (first_row, row_count)
        known = self._known.get(key)
        if known is None:
            known = self._oracle.measure(first_row, row_count)
            for value in (known.decoded_bytes, known.wire_bytes):
                if type(value) is not int or value < 0:
                    raise ValueError(f"size oracle returned {known!r} for rows "
                                     f"[{first_row}, {first_row + row_count}); "
                                     "expected non-negative integers")
            self._known[key] = known
        return known


class _Parent:
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


def _scope_error(what: str, rows: int, size: Measured, exceeded: list[str],
                 details: dict[str, object]) -> DponeError:
    return DponeError(
        code="REST_DELIVERY_SCOPE_EXCEEDS_LIMIT",
        message=(f"{what} holds {rows} rows, {size.decoded_bytes} decoded bytes and "
                 f"{size.wire_bytes} wire bytes, over {', '.join(exceeded)}"),
        details={**details, "rows": rows, "decoded_bytes": size.decoded_bytes,
                 "wire_bytes": size.wire_bytes, "exceeded": exceeded},
    )


class _AdaptivePlanner:
    def __init__(self, parent: _Parent, limits: Limits, mutation_kind: str,
                 measure: _Measurements) -> None:
        self._parent = parent
        self._planning = _planning_caps(limits)
        self._hard = _hard_caps(limits)
        self._max_days = limits.preferred_window_days.max
        self._atomic_days = mutation_kind == "partition_replace"
        self._measure = measure
        n = parent.n_days
        self._est_decoded = [0] * (n + 1)
        self._est_wire = [0] * (n + 1)

    def _measure_days(self) -> None:
        """Measure every day with rows once; an atomic day over a hard max fails here."""
        parent = self._parent
        for index in range(parent.n_days):
            decoded = wire = 0
            count = parent.counts[index]
            if count:
                size = self._measure(parent.starts[index], count)
                if self._atomic_days and not self._hard.admits(count, size):
                    raise self._atomic_day_error(index, size)
                decoded, wire = size.decoded_bytes, size.wire_bytes
            self._est_decoded[index + 1] = self._est_decoded[index] + decoded
            self._est_wire[index + 1] = self._est_wire[index] + wire

    def _atomic_day_error(self, index: int, size: Measured) -> DponeError:
        day = self._parent.date(index)
        count = self._parent.counts[index]
        return _scope_error(
            f"receiver-atomic scope {day} (partition_replace never splits a day)", count, size,
            self._hard.exceeded(count, size), {"day": day.isoformat(),
                                               "mutation_kind": "partition_replace"})

    def _estimate_fits(self, day_from: int, day_to: int) -> bool:
        _, rows = self._parent.rows(day_from, day_to)
        estimate = Measured(self._est_decoded[day_to] - self._est_decoded[day_from],
                            self._est_wire[day_to] - self._est_wire[day_from])
        return self._planning.admits(rows, estimate)

    def plan(self) -> list[_Span]:
        self._measure_days()
        spans: list[_Span] = []
        cursor = 0
        while cursor < self._parent.n_days:
            cap = min(self._max_days, self._parent.n_days - cursor)
            length = 0
            while length < cap and self._estimate_fits(cursor, cursor + length + 1):
                length += 1
            chosen = self._verified_window(cursor, length) if length else self._oversized_day(cursor)
            spans.extend(chosen)
            cursor = chosen[-1].day_to
        return spans

    def _window(self, day_from: int, day_to: int) -> tuple[_Span, bool]:
        first, count = self._parent.rows(day_from, day_to)
        size = self._measure(first, count)
        return _Span(day_from, day_to, first, count, size), self._planning.admits(count, size)

    def _verified_window(self, day_from: int, length: int) -> list[_Span]:
        """Measure the estimated window; if it is over the planning limits, shrink it by days.

        The shrink is a binary search on the exact sizes between 0 days (trivially fitting)
        and ``length`` days (measured too large), so it ends on the longest measured window
        that fits, or on the first day alone.
        """
        span, fits = self._window(day_from, day_from + length)
        if fits:
            return [span]
        fitting: _Span | None = None
        lo, hi = 0, length
        while hi - lo > 1:
            mid = (lo + hi) // 2
            candidate, fits = self._window(day_from, day_from + mid)
            if fits:
                lo, fitting = mid, candidate
            else:
                hi = mid
        return [fitting] if fitting is not None else self._oversized_day(day_from)

    def _oversized_day(self, index: int) -> list[_Span]:
        """One day alone is over the planning limits (exactly measured).

        A receiver-atomic day (partition_replace) is sent whole if it is within the hard
        limits (it was checked against them when measured); an appended day is split into
        row-range parts. A day without rows cannot be split: it must fit the hard limits.
        """
        span, fits = self._window(index, index + 1)
        if fits:
            return [span]
        if span.row_count and not self._atomic_days:
            return self._split_rows(index, span)
        if self._hard.admits(span.row_count, span.size):
            return [span]
        if self._atomic_days:
            raise self._atomic_day_error(index, span.size)
        day = self._parent.date(index)
        raise _scope_error(f"empty scope {day} (its payload without rows)", 0, span.size,
                           self._hard.exceeded(0, span.size), {"day": day.isoformat()})

    def _split_rows(self, index: int, whole: _Span) -> list[_Span]:
        """Cut one appended day into the fewest greedy row-range parts within planning limits."""
        end = whole.first_row + whole.row_count
        guess = self._proportional_rows(whole)
        pieces: list[tuple[int, int, Measured]] = []
        position = whole.first_row
        while position < end:
            count, size = self._largest_prefix(position, end - position, guess)
            if count == 0:
                count, size = 1, self._measure(position, 1)
                if not self._hard.admits(1, size):
                    day = self._parent.date(index)
                    raise _scope_error(
                        f"row {position} of {day} alone (incremental_append cannot split a row)",
                        1, size, self._hard.exceeded(1, size),
                        {"day": day.isoformat(), "row": position,
                         "mutation_kind": "incremental_append"})
            pieces.append((position, count, size))
            position += count
            guess = count
        return [_Span(index, index + 1, first, count, size, part, len(pieces))
                for part, (first, count, size) in enumerate(pieces, start=1)]

    def _proportional_rows(self, whole: _Span) -> int:
        """First guess of a part's rows: the day's rows scaled by the tightest byte ratio."""
        guess = min(whole.row_count, self._planning.rows)
        for budget, used in ((self._planning.decoded_bytes, whole.size.decoded_bytes),
                             (self._planning.wire_bytes, whole.size.wire_bytes)):
            if used > 0:
                guess = min(guess, whole.row_count * budget // used)
        return max(guess, 1)

    def _largest_prefix(self, first_row: int, remaining: int, guess: int) -> tuple[int, Measured]:
        """The most rows from ``first_row`` whose exact size fits the planning limits.

        Searches outward from ``guess`` with doubling steps (up while it fits, down while it
        does not) to bracket the answer, then bisects the bracket: O(log rows) measurements,
        each about the size of one part, and few when the guess is close. Returns 0 rows when
        a single row is over the planning limits.
        """
        cap = min(remaining, self._planning.rows)
        probe = min(max(guess, 1), cap)
        size = self._measure(first_row, probe)
        step = 1
        if self._planning.admits(probe, size):
            lo, hi, best = probe, cap + 1, size
            while lo < cap:
                probe = min(lo + step, cap)
                size = self._measure(first_row, probe)
                if not self._planning.admits(probe, size):
                    hi = probe
                    break
                lo, best, step = probe, size, step * 2
        else:
            lo, hi, best = 0, probe, Measured(0, 0)
            while hi > 1:
                probe = max(hi - step, 1)
                size = self._measure(first_row, probe)
                if self._planning.admits(probe, size):
                    lo, best = probe, size
                    break
                hi, step = probe, step * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            size = self._measure(first_row, mid)
            if self._planning.admits(mid, size):
                lo, best = mid, size
            else:
                hi = mid
        return lo, best


def _finish(parent: _Parent, spans: list[_Span], algorithm_version: str,
            days: Sequence[DaySlice], boundary_to: dt.date) -> ChildPlan:
    children = tuple(
        ChildDescriptor(ordinal=ordinal, scope_from=parent.date(span.day_from),
                        scope_to=parent.date(span.day_to), first_row=span.first_row,
                        row_count=span.row_count, part=span.part, parts=span.parts,
                        decoded_bytes=span.size.decoded_bytes, wire_bytes=span.size.wire_bytes)
        for ordinal, span in enumerate(spans, start=1))
    plan = ChildPlan(
        planner_algorithm_version=algorithm_version,
        children=children,
        coverage=coverage_proof(children, parent.total_rows, parent.boundary_from, boundary_to),
        requests=len(children),
    )
    verify_coverage(plan, days, parent.total_rows, parent.boundary_from, boundary_to)
    return plan


def _checked_parent(boundary_from: dt.date, boundary_to: dt.date, days: Sequence[DaySlice],
                    total_rows: int, algorithm_version: str) -> _Parent:
    check_days(days, total_rows, boundary_from, boundary_to)
    if not algorithm_version:
        raise ValueError("algorithm_version must be a non-empty string")
    return _Parent(boundary_from, boundary_to, days, total_rows)


def plan_children(
    *,
    boundary_from: dt.date,
    boundary_to: dt.date,
    days: Sequence[DaySlice],
    total_rows: int,
    limits: Limits,
    mutation_kind: str,
    oracle: SizeOracle,
    algorithm_version: str = PLANNER_ALGORITHM_VERSION,
) -> ChildPlan:
    """Plan the children of the frozen boundary ``[boundary_from, boundary_to)``.

    **Window rule.** Windows are consecutive half-open ranges of whole UTC calendar days that
    together cover every date of the boundary, days without rows included. Walking from
    ``boundary_from``, each window is the *longest* run of days, at most
    ``preferred_window_days.max`` and never past ``boundary_to``, whose size fits the
    planning limits (``planning_rows`` — ``max_rows`` when unset —, ``planning_decoded_bytes``,
    ``planning_wire_bytes``). Its size is first estimated as the sum of the exact per-day sizes,
    then the window is measured exactly once; if the exact size is over a planning limit the
    window shrinks by whole days (binary search on exact sizes). Consequently a window is
    shorter than ``preferred_window_days.min`` only when (a) the boundary ends, or (b) ``min``
    days from that start do not fit the planning limits — in particular when the next day
    alone is over them. Such a day becomes a window of its own:

    * ``partition_replace``: the day is receiver-atomic and never split. It is sent whole
      when within the hard ``max_*`` limits (even if over the planning limits); a day over a
      hard limit raises ``REST_DELIVERY_SCOPE_EXCEEDS_LIMIT`` naming the day, rows and bytes.
    * ``incremental_append``: the day is split into row-range parts (``part`` 1..``parts`` of
      that one-day scope), each the longest run of rows that fits the planning limits (binary
      search on the row count). A single row over the planning limits is its own part when
      within the hard limits; over a hard limit it raises ``REST_DELIVERY_SCOPE_EXCEEDS_LIMIT``.

    Every child is exactly measured, so none exceeds a hard limit. A boundary without rows
    yields no children and a coverage proof with ``empty=True`` over the whole boundary.

    **Oracle cost.** One measurement per day with rows, one per child (an interval measured
    before, such as a one-day window, is not measured again), plus O(log days) per window
    that fails verification and O(log rows) per appended part.

    Raises ``ValueError`` for inconsistent input (see :func:`check_days`) and after planning if
    the plan would not pass :func:`verify_coverage`.
    """
    if mutation_kind not in MUTATION_KINDS:
        raise ValueError(f"mutation_kind {mutation_kind!r} is not one of {', '.join(MUTATION_KINDS)}")
    parent = _checked_parent(boundary_from, boundary_to, days, total_rows, algorithm_version)
    spans: list[_Span] = []
    if total_rows:
        spans = _AdaptivePlanner(parent, limits, mutation_kind, _Measurements(oracle)).plan()
    return _finish(parent, spans, algorithm_version, days, boundary_to)


def fixed_width_children(
    *,
    boundary_from: dt.date,
    boundary_to: dt.date,
    days: Sequence[DaySlice],
    total_rows: int,
    limits: EffectiveLimits,
    oracle: SizeOracle,
    algorithm_version: str = FIXED_WIDTH_ALGORITHM_VERSION,
) -> ChildPlan:
    """The naive baseline: fixed windows of ``limits.window_days`` days, no size awareness.

    Windows start at ``boundary_from``; the last one ends at ``boundary_to``. Each child is
    measured once so that its sizes can be compared with the limits (:func:`limit_violations`);
    nothing is split or shrunk. A boundary without rows yields no children, as in the planner.
    """
    parent = _checked_parent(boundary_from, boundary_to, days, total_rows, algorithm_version)
    measure = _Measurements(oracle)
    spans: list[_Span] = []
    if total_rows:
        for day_from in range(0, parent.n_days, limits.window_days):
            day_to = min(day_from + limits.window_days, parent.n_days)
            first, count = parent.rows(day_from, day_to)
            spans.append(_Span(day_from, day_to, first, count, measure(first, count)))
    return _finish(parent, spans, algorithm_version, days, boundary_to)


def limit_violations(plan: ChildPlan, limits: Limits) -> tuple[int, ...]:
    """Ordinals of the children over a hard ``max_*`` limit (rows, decoded or wire bytes)."""
    hard = _hard_caps(limits)
    return tuple(child.ordinal for child in plan.children
                 if not hard.admits(child.row_count, Measured(child.decoded_bytes, child.wire_bytes)))
