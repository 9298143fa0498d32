"""The deterministic adaptive planner: one frozen parent -> ordered children + coverage proof.

Pure: no I/O. Sizes come from a :class:`SizeOracle` the caller (the sealer) implements with the
real codecs. Encoding costs about as much as the rows it encodes, so the planner asks the
oracle for a cheap, possibly inexact *estimate* of each day with rows, proposes windows
additively from those per-day estimates, and then measures each proposed child exactly once
to verify it; only a child that fails verification costs more (a binary search of O(log)
further exact measurements). Only exact measurements accept a child. Integer arithmetic only:
the same inputs, oracle and algorithm version always give the same plan.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Final

from dpone.contracts import DponeError
from dpone.contracts.children import ChildDescriptor, ChildPlan, DaySlice
from dpone.contracts.plan import PLANNER_ALGORITHM_VERSION, EffectiveLimits
from dpone.contracts.profile import Limits
from dpone.plans._budget import check_budget, fewest_children
from dpone.plans._coverage import check_days, coverage_proof, verify_coverage
from dpone.plans._windows import (
    Measured,
    Parent,
    SizeOracle,
    Sizes,
    Span,
    hard_caps,
    planning_caps,
    scope_error,
)

__all__ = ["FIXED_WIDTH_ALGORITHM_VERSION", "MUTATION_KINDS", "Measured", "SizeOracle",
           "fixed_width_children", "limit_violations", "plan_children"]

FIXED_WIDTH_ALGORITHM_VERSION: Final = "dpone.fixed_window_baseline.v1"
MUTATION_KINDS: Final = ("partition_replace", "incremental_append")


class _AdaptivePlanner:
    def __init__(self, parent: Parent, limits: EffectiveLimits, mutation_kind: str,
                 sizes: Sizes) -> None:
        self._parent = parent
        self._limits = limits
        self._planning = planning_caps(limits)
        self._hard = hard_caps(limits)
        self._max_days = limits.window_days
        self._atomic_days = mutation_kind == "partition_replace"
        self._measure = sizes
        self._est_decoded, self._est_wire = parent.prefix_sizes(sizes.estimate)

    def _atomic_day_error(self, index: int, size: Measured) -> DponeError:
        day = self._parent.date(index)
        count = self._parent.counts[index]
        return scope_error(
            f"receiver-atomic scope {day} (partition_replace never splits a day)", count, size,
            self._hard.exceeded(count, size), {"day": day.isoformat(),
                                               "mutation_kind": "partition_replace"})

    def _estimate(self, day_from: int, day_to: int) -> Measured:
        return Measured(self._est_decoded[day_to] - self._est_decoded[day_from],
                        self._est_wire[day_to] - self._est_wire[day_from])

    def _estimate_fits(self, day_from: int, day_to: int) -> bool:
        _, rows = self._parent.rows(day_from, day_to)
        return self._planning.admits(rows, self._estimate(day_from, day_to))

    def plan(self) -> list[Span]:
        spans: list[Span] = []
        cursor = 0
        while cursor < self._parent.n_days:
            cap = min(self._max_days, self._parent.n_days - cursor)
            length = 0
            while length < cap and self._estimate_fits(cursor, cursor + length + 1):
                length += 1
            chosen = self._verified_window(cursor, length) if length else self._oversized_day(cursor)
            spans.extend(chosen)
            cursor = chosen[-1].day_to
            self._check_budget(len(spans), cursor)
        return spans

    def _check_budget(self, planned: int, cursor: int) -> None:
        """Stop as soon as the children planned plus the fewest still needed are over budget."""
        parent = self._parent
        remaining_days = parent.n_days - cursor
        still_needed = fewest_children(remaining_days, parent.total_rows - parent.starts[cursor],
                                       self._limits) if remaining_days else 0
        check_budget(planned + still_needed, exact=not remaining_days,
                     boundary_from=parent.boundary_from, boundary_to=parent.date(parent.n_days),
                     limits=self._limits)

    def _window(self, day_from: int, day_to: int) -> tuple[Span, bool]:
        first, count = self._parent.rows(day_from, day_to)
        size = self._measure(first, count)
        return Span(day_from, day_to, first, count, size), self._planning.admits(count, size)

    def _verified_window(self, day_from: int, length: int) -> list[Span]:
        """Measure the estimated window; if it is over the planning limits, shrink it by days.

        The shrink is a binary search on the exact sizes between 0 days (trivially fitting)
        and ``length`` days (measured too large), so it ends on the longest measured window
        that fits, or on the first day alone.
        """
        span, fits = self._window(day_from, day_from + length)
        if fits:
            return [span]
        fitting: Span | None = None
        lo, hi = 0, length
        while hi - lo > 1:
            mid = (lo + hi) // 2
            candidate, fits = self._window(day_from, day_from + mid)
            if fits:
                lo, fitting = mid, candidate
            else:
                hi = mid
        return [fitting] if fitting is not None else self._oversized_day(day_from)

    def _oversized_day(self, index: int) -> list[Span]:
        """One day alone is over the planning limits (by its estimate or exactly measured).

        The day is measured exactly first, and kept whole if it fits after all. Otherwise a
        receiver-atomic day (partition_replace) is sent whole if it is within the hard limits;
        an appended day is split into row-range parts. An appended day with more rows than
        the planning rows is split without measuring it whole (its row count is exact). A day
        without rows cannot be split: it must fit the hard limits.
        """
        first, count = self._parent.rows(index, index + 1)
        if count > self._planning.rows and not self._atomic_days:
            return self._split_rows(index, first, count, self._estimate(index, index + 1))
        span, fits = self._window(index, index + 1)
        if fits:
            return [span]
        if span.row_count and not self._atomic_days:
            return self._split_rows(index, first, count, span.size)
        if self._hard.admits(span.row_count, span.size):
            return [span]
        if self._atomic_days:
            raise self._atomic_day_error(index, span.size)
        day = self._parent.date(index)
        raise scope_error(f"empty scope {day} (its payload without rows)", 0, span.size,
                          self._hard.exceeded(0, span.size), {"day": day.isoformat()})

    def _split_rows(self, index: int, first_row: int, row_count: int,
                    day_size: Measured) -> list[Span]:
        """Cut one appended day into the fewest greedy row-range parts within planning limits."""
        end = first_row + row_count
        guess = self._proportional_rows(row_count, day_size)
        pieces: list[tuple[int, int, Measured]] = []
        position = first_row
        while position < end:
            count, size = self._largest_prefix(position, end - position, guess)
            if count == 0:
                count, size = 1, self._measure(position, 1)
                if not self._hard.admits(1, size):
                    day = self._parent.date(index)
                    raise scope_error(
                        f"row {position} of {day} alone (incremental_append cannot split a row)",
                        1, size, self._hard.exceeded(1, size),
                        {"day": day.isoformat(), "row": position,
                         "mutation_kind": "incremental_append"})
            pieces.append((position, count, size))
            position += count
            guess = count
        return [Span(index, index + 1, first, count, size, part, len(pieces))
                for part, (first, count, size) in enumerate(pieces, start=1)]

    def _proportional_rows(self, row_count: int, day_size: Measured) -> int:
        """First guess of a part's rows: the day's rows scaled by the tightest byte ratio."""
        guess = min(row_count, self._planning.rows)
        for budget, used in ((self._planning.decoded_bytes, day_size.decoded_bytes),
                             (self._planning.wire_bytes, day_size.wire_bytes)):
            if used > 0:
                guess = min(guess, row_count * budget // used)
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


def _finish(parent: Parent, spans: list[Span], algorithm_version: str,
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


def _check_input(boundary_from: dt.date, boundary_to: dt.date, days: Sequence[DaySlice],
                 total_rows: int, algorithm_version: str) -> None:
    check_days(days, total_rows, boundary_from, boundary_to)
    if not algorithm_version:
        raise ValueError("algorithm_version must be a non-empty string")


def _checked_parent(boundary_from: dt.date, boundary_to: dt.date, days: Sequence[DaySlice],
                    total_rows: int, algorithm_version: str) -> Parent:
    _check_input(boundary_from, boundary_to, days, total_rows, algorithm_version)
    return Parent(boundary_from, boundary_to, days, total_rows)


def plan_children(
    *,
    boundary_from: dt.date,
    boundary_to: dt.date,
    days: Sequence[DaySlice],
    total_rows: int,
    limits: EffectiveLimits,
    mutation_kind: str,
    oracle: SizeOracle,
    algorithm_version: str = PLANNER_ALGORITHM_VERSION,
) -> ChildPlan:
    """Plan the children of the frozen boundary ``[boundary_from, boundary_to)``.

    **Window rule.** Windows are consecutive half-open ranges of whole UTC calendar days that
    together cover every date of the boundary, days without rows included. Walking from
    ``boundary_from``, each window is the *longest* run of days, at most
    ``limits.window_days`` (the workload's ``preferred_window_days``, or the profile's
    default, within the profile's ``min..max``) and never past ``boundary_to``, whose size fits
    the planning limits (``planning_rows`` — ``max_rows`` when unset —,
    ``planning_decoded_bytes``, ``planning_wire_bytes``). Its size is first estimated as the
    sum of the oracle's per-day *estimates* (cheap, possibly inexact), then the window is
    measured exactly once; if the exact size is over a planning limit the window shrinks by
    whole days (binary search on exact sizes). "Fits" therefore means: by its estimate and
    exactly. An estimate that is too high only makes windows shorter; one that is too low only
    costs measurements. A window is shorter than ``window_days`` only when (a) the boundary
    ends, or (b) one more day would not fit the planning limits — in particular when the next
    day alone is over them. Such a day becomes a window of its own:

    * ``partition_replace``: the day is receiver-atomic and never split. It is sent whole
      when within the hard ``max_*`` limits (even if over the planning limits); a day over a
      hard limit raises ``REST_DELIVERY_SCOPE_EXCEEDS_LIMIT`` naming the day, rows and bytes.
    * ``incremental_append``: the day is split into row-range parts (``part`` 1..``parts`` of
      that one-day scope), each the longest run of rows that fits the planning limits (binary
      search on the row count). A single row over the planning limits is its own part when
      within the hard limits; over a hard limit it raises ``REST_DELIVERY_SCOPE_EXCEEDS_LIMIT``.

    Every child is exactly measured, so none exceeds a hard limit. A boundary without rows
    yields no children and a coverage proof with ``empty=True`` over the whole boundary.

    **Child budget.** A plan has at most ``limits.max_children`` children; beyond it
    ``REST_DELIVERY_SCOPE_EXCEEDS_LIMIT`` names the boundary, the count (or its lower bound)
    and the limit. The lower bound (see :mod:`dpone.plans._budget`) is checked before any
    size is read and again after each window, so an oversized boundary costs at most about
    ``max_children`` windows of work.

    **Oracle cost.** One ``estimate`` per day with rows; one exact ``measure`` per child (an
    interval is never measured twice), plus O(log days) per window that fails verification,
    one per day over the planning limits, and O(log rows) per appended part (one when the
    part is bounded by the planning rows and the estimate is not far too low).

    Raises ``ValueError`` for inconsistent input (see :func:`check_days`) and after planning if
    the plan would not pass :func:`verify_coverage`.
    """
    if mutation_kind not in MUTATION_KINDS:
        raise ValueError(f"mutation_kind {mutation_kind!r} is not one of {', '.join(MUTATION_KINDS)}")
    _check_input(boundary_from, boundary_to, days, total_rows, algorithm_version)
    if total_rows:
        check_budget(fewest_children((boundary_to - boundary_from).days, total_rows, limits),
                     exact=False, boundary_from=boundary_from, boundary_to=boundary_to,
                     limits=limits)
    parent = Parent(boundary_from, boundary_to, days, total_rows)
    spans: list[Span] = []
    if total_rows:
        spans = _AdaptivePlanner(parent, limits, mutation_kind, Sizes(oracle)).plan()
    return _finish(parent, spans, algorithm_version, days, boundary_to)


def fixed_width_children(
    *,
    boundary_from: dt.date,
    boundary_to: dt.date,
    days: Sequence[DaySlice],
    total_rows: int,
    limits: EffectiveLimits,
    oracle: SizeOracle,
    window_days: int | None = None,
    algorithm_version: str = FIXED_WIDTH_ALGORITHM_VERSION,
) -> ChildPlan:
    """The naive baseline: fixed windows of ``window_days`` days (``limits.window_days`` by
    default), no size awareness.

    Windows start at ``boundary_from``; the last one ends at ``boundary_to``. Each child is
    measured once so that its sizes can be compared with the limits (:func:`limit_violations`);
    nothing is split or shrunk, and there is no child budget. A boundary without rows yields
    no children, as in the planner. Windows of ``limits.window_days`` are the fewest requests
    any plan can have; a narrower width is the baseline an operator would have to choose to
    stay within the limits.
    """
    width = limits.window_days if window_days is None else window_days
    if width < 1:
        raise ValueError(f"window_days {width} is not a positive number of days")
    parent = _checked_parent(boundary_from, boundary_to, days, total_rows, algorithm_version)
    measure = Sizes(oracle)
    spans: list[Span] = []
    if total_rows:
        for day_from in range(0, parent.n_days, width):
            day_to = min(day_from + width, parent.n_days)
            first, count = parent.rows(day_from, day_to)
            spans.append(Span(day_from, day_to, first, count, measure(first, count)))
    return _finish(parent, spans, algorithm_version, days, boundary_to)


def limit_violations(plan: ChildPlan, limits: Limits) -> tuple[int, ...]:
    """Ordinals of the children over a hard ``max_*`` limit (rows, decoded or wire bytes)."""
    hard = hard_caps(limits)
    return tuple(child.ordinal for child in plan.children
                 if not hard.admits(child.row_count, Measured(child.decoded_bytes, child.wire_bytes)))
