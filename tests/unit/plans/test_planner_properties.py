"""Property tests of the adaptive planner over generated frozen parents.

Sources vary the boundary (1..120 days), the volume shape (gaps, empty days, heavy skew, one
huge day, all rows on one day, no rows at all), the per-row sizes, the oracle (sub- and
superadditive; per-day estimates exact or off by up to a factor 2 in either direction) and
the limits. For every generated source:

* the coverage proof holds and no child exceeds a hard limit; every recorded size is exact;
* partition_replace never splits a day and fails with REST_DELIVERY_SCOPE_EXCEEDS_LIMIT
  exactly when one day alone exceeds a hard max; incremental_append fails exactly when one
  row alone does, and otherwise succeeds by splitting rows;
* the window rule holds: windows are at most ``window_days`` days (the workload's preference
  within the profile's ``min..max``) and maximal (one more day, or one more row for a part,
  would break a planning limit), so shorter only when a limit or the boundary end forces it;
* the child budget refuses exactly the plans with more than ``max_children`` children, with a
  true lower bound of the count;
* the plan is deterministic; the oracle estimates each day with rows once and measures
  exactly O(children * log rows) times.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpone.contracts import DponeError
from dpone.contracts.children import ChildDescriptor, ChildPlan, DaySlice
from dpone.contracts.plan import EffectiveLimits
from dpone.plans import Measured, child_plan_digest, limit_violations, plan_children, verify_coverage
from support.plans import RowOracle, day_slices, limits, row_sizes, scope_groups

SETTINGS = settings(max_examples=200, deadline=None)
KINDS = ("partition_replace", "incremental_append")
# Estimate errors: exact, uniformly low or high (x1/2, x2), and mixed per day.
ESTIMATE_FACTORS = (((1, 1),), ((1, 1),), ((1, 2),), ((2, 1),), ((9, 10), (11, 10)),
                    ((1, 2), (2, 1), (1, 1), (3, 2)))


@dataclass
class Source:
    start: dt.date
    counts: list[int]
    days: list[DaySlice]
    total: int
    sizes: list[int]
    header: int
    ratio: tuple[int, int]
    quadratic_div: int
    estimate_factors: tuple[tuple[int, int], ...]
    limits: EffectiveLimits
    kind: str

    def __post_init__(self) -> None:
        self.starts = [0]
        for count in self.counts:
            self.starts.append(self.starts[-1] + count)

    @property
    def end(self) -> dt.date:
        return self.start + dt.timedelta(days=len(self.counts))

    def oracle(self) -> RowOracle:
        return RowOracle(self.sizes, header=self.header, num=self.ratio[0], den=self.ratio[1],
                         quadratic_div=self.quadratic_div,
                         estimate_factors=self.estimate_factors)

    def plan(self, oracle: RowOracle | None = None) -> ChildPlan:
        return plan_children(boundary_from=self.start, boundary_to=self.end, days=self.days,
                             total_rows=self.total, limits=self.limits, mutation_kind=self.kind,
                             oracle=oracle or self.oracle())


@st.composite
def volumes(draw: st.DrawFn, n_days: int) -> list[int]:
    """Rows per day. Drawn as a shape and a seed (cheap to generate for 120-day boundaries)."""
    shape = draw(st.sampled_from(["gaps", "dense", "skew", "one_huge", "single_day", "empty"]))
    rng = random.Random(draw(st.integers(0, 2**32)))
    if shape == "empty":
        return [0] * n_days
    if shape == "single_day":
        counts = [0] * n_days
        counts[draw(st.integers(0, n_days - 1))] = draw(st.integers(1, 1500))
        return counts
    if shape == "skew":
        return [rng.choice((0, 0, 1, 2, 5, 10, 40, 300)) for _ in range(n_days)]
    heaviest = draw(st.integers(1, 100))
    empty_pct = 0 if shape == "dense" else draw(st.integers(0, 90))
    counts = [0 if rng.randrange(100) < empty_pct else rng.randint(1, heaviest)
              for _ in range(n_days)]
    if shape == "one_huge":
        counts[draw(st.integers(0, n_days - 1))] = draw(st.integers(500, 1500))
    return counts


@st.composite
def sources(draw: st.DrawFn, kinds: tuple[str, ...] = KINDS) -> Source:
    n_days = draw(st.integers(1, 120))
    counts = draw(volumes(n_days))
    start = draw(st.dates(min_value=dt.date(2020, 1, 1), max_value=dt.date(2030, 12, 31)))
    days, total = day_slices(start, counts)
    low, high = draw(st.sampled_from([(20, 200), (1, 10), (60, 100), (200, 2500)]))
    sizes = row_sizes(total, draw(st.integers(0, 2**32)), low, high)
    max_rows = draw(st.integers(50, 3000))
    planning_rows = draw(st.one_of(st.none(), st.integers(1, max_rows)))
    low_days = draw(st.integers(1, 10))
    high_days = draw(st.integers(low_days, 40))
    window = (draw(st.integers(low_days, high_days)), low_days, high_days)
    effective = limits(max_rows=max_rows, planning_rows=planning_rows,
                       max_decoded=draw(st.integers(2_000, 200_000)),
                       max_wire=draw(st.integers(1_000, 100_000)),
                       planning_pct=draw(st.integers(50, 100)), window=window)
    return Source(start, counts, days, total, sizes, header=64,
                  ratio=draw(st.sampled_from([(1, 3), (1, 1), (11, 10)])),
                  quadratic_div=draw(st.sampled_from([0, 0, 50, 7])),
                  estimate_factors=draw(st.sampled_from(ESTIMATE_FACTORS)),
                  limits=effective, kind=draw(st.sampled_from(kinds)))


def _planning(limits: EffectiveLimits) -> tuple[int, int, int]:
    rows = limits.planning_rows if limits.planning_rows is not None else limits.max_rows
    return rows, limits.planning_decoded_bytes, limits.planning_wire_bytes


def _fits(caps: tuple[int, int, int], rows: int, size: Measured) -> bool:
    return rows <= caps[0] and size.decoded_bytes <= caps[1] and size.wire_bytes <= caps[2]


def _hard(limits: EffectiveLimits) -> tuple[int, int, int]:
    return limits.max_rows, limits.max_decoded_bytes, limits.max_wire_bytes


def _rows(source: Source, day_from: int, day_to: int) -> tuple[int, int]:
    return source.starts[day_from], source.starts[day_to] - source.starts[day_from]


def _window_fits(source: Source, oracle: RowOracle, day_from: int, day_to: int) -> bool:
    """Whether the planner could accept the window: by its additive estimate and exactly."""
    caps = _planning(source.limits)
    first, count = _rows(source, day_from, day_to)
    per_day = [oracle.guess(*_rows(source, i, i + 1)) for i in range(day_from, day_to)
               if source.counts[i]]
    estimate = Measured(sum(m.decoded_bytes for m in per_day), sum(m.wire_bytes for m in per_day))
    return _fits(caps, count, estimate) and _fits(caps, count, oracle.exact(first, count))


def _oversized_rows(source: Source) -> list[int]:
    """Rows whose one-row payload exceeds a hard limit (its size depends on the row size only)."""
    hard = _hard(source.limits)
    bad = {size for size in set(source.sizes)
           if not _fits(hard, 1, RowOracle([size], header=source.header, num=source.ratio[0],
                                           den=source.ratio[1],
                                           quadratic_div=source.quadratic_div).exact(0, 1))}
    return [row for row, size in enumerate(source.sizes) if size in bad]


def _expected_failure(source: Source, oracle: RowOracle) -> bool:
    hard = _hard(source.limits)
    if source.kind == "partition_replace":
        return any(not _fits(hard, d.row_count, oracle.exact(d.first_row, d.row_count))
                   for d in source.days)
    return bool(_oversized_rows(source))


def _offset(source: Source, date: dt.date) -> int:
    return (date - source.start).days


@SETTINGS
@given(sources())
def test_coverage_holds_and_no_child_exceeds_a_hard_limit(source: Source) -> None:
    oracle = source.oracle()
    expected_failure = _expected_failure(source, oracle)
    try:
        plan = source.plan(oracle)
    except DponeError as error:
        assert error.code == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT"
        assert expected_failure, error.message
        assert error.details["exceeded"]
        return
    assert not expected_failure
    verify_coverage(plan, source.days, source.total, source.start, source.end)
    assert limit_violations(plan, source.limits) == ()
    assert plan.coverage.empty == (source.total == 0)
    for child in plan.children:
        assert Measured(child.decoded_bytes, child.wire_bytes) == oracle.exact(child.first_row,
                                                                              child.row_count)
    if source.kind == "partition_replace":
        assert all(child.parts == 1 for child in plan.children)


@SETTINGS
@given(sources(kinds=("partition_replace",)))
def test_partition_replace_fails_exactly_when_one_day_exceeds_a_hard_max(source: Source) -> None:
    oracle = source.oracle()
    hard = _hard(source.limits)
    offenders = [d for d in source.days
                 if not _fits(hard, d.row_count, oracle.exact(d.first_row, d.row_count))]
    if not offenders:
        plan = source.plan()
        assert all(child.parts == 1 for child in plan.children)
        return
    with pytest.raises(DponeError) as caught:
        source.plan()
    error = caught.value
    assert error.code == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT"
    first = offenders[0]
    size = oracle.exact(first.first_row, first.row_count)
    assert error.details["day"] == first.day.isoformat()
    assert (error.details["rows"], error.details["decoded_bytes"], error.details["wire_bytes"]) == (
        first.row_count, size.decoded_bytes, size.wire_bytes)
    assert first.day.isoformat() in error.message


@SETTINGS
@given(sources(kinds=("incremental_append",)))
def test_incremental_append_splits_rows_and_fails_only_on_one_oversized_row(source: Source) -> None:
    oracle = source.oracle()
    offenders = _oversized_rows(source)
    if offenders:
        with pytest.raises(DponeError) as caught:
            source.plan()
        assert caught.value.code == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT"
        assert caught.value.details["row"] == offenders[0]
        return
    plan = source.plan()
    caps = _planning(source.limits)
    for group in scope_groups(plan.children):
        if len(group) > 1:
            assert (group[0].scope_to - group[0].scope_from).days == 1
        for child in group[:-1]:  # each part but the last is maximal: one more row breaks a limit
            assert not _fits(caps, child.row_count + 1,
                             oracle.exact(child.first_row, child.row_count + 1))


def _check_group_rule(source: Source, oracle: RowOracle, group: list[ChildDescriptor],
                      final: bool) -> None:
    caps = _planning(source.limits)
    window_days = source.limits.window_days
    head = group[0]
    day_from, day_to = _offset(source, head.scope_from), _offset(source, head.scope_to)
    length = day_to - day_from
    assert 1 <= length <= window_days
    if len(group) == 1 and not _fits(caps, head.row_count, Measured(head.decoded_bytes,
                                                                     head.wire_bytes)):
        # Over the planning limits: only an atomic day (replace) or a single row (append).
        assert (length == 1 and head.row_count > 0) if source.kind == "partition_replace" else (
            head.row_count == 1)
    if final:
        return
    if length < window_days:  # maximal: one more day would not fit the planning limits
        assert not _window_fits(source, oracle, day_from, day_to + 1)


@SETTINGS
@given(sources())
def test_window_rule(source: Source) -> None:
    oracle = source.oracle()
    try:
        plan = source.plan()
    except DponeError:
        return
    groups = scope_groups(plan.children)
    for index, group in enumerate(groups):
        _check_group_rule(source, oracle, group, final=index == len(groups) - 1)
    if groups:
        assert groups[-1][0].scope_to == source.end


@SETTINGS
@given(sources())
def test_deterministic_and_oracle_calls_are_bounded(source: Source) -> None:
    first, second = source.oracle(), source.oracle()
    try:
        plan = source.plan(first)
    except DponeError as error:
        with pytest.raises(DponeError) as again:
            source.plan(second)
        assert again.value.to_document() == error.to_document()
        assert first.calls == second.calls
        return
    again = source.plan(second)
    assert again == plan
    assert first.calls == second.calls
    assert len(set(first.calls)) == len(first.calls)  # no interval is measured twice
    assert child_plan_digest(plan) == child_plan_digest(again)
    assert first.estimates == [(d.first_row, d.row_count) for d in source.days]
    children = plan.requests
    bound = children * (
        4 + source.limits.window_days.bit_length() + 2 * source.total.bit_length())
    assert len(first.calls) <= bound
    never_low = all(num >= den for num, den in source.estimate_factors)
    if source.kind == "partition_replace" and source.quadratic_div == 0 and never_low:
        # Subadditive sizes and estimates never below the exact size: the estimate is an
        # upper bound, so verification never fails: one exact measurement per child.
        assert len(first.calls) <= children


@st.composite
def calendar_boundaries(draw: st.DrawFn, max_days: int = 400) -> tuple[dt.date, dt.date]:
    """A boundary ``[start, end)`` of 1..``max_days`` days anywhere in the calendar.

    The length is drawn first and the start bounded by it, so ``end`` never passes
    ``date.max`` (the last representable date).
    """
    n_days = draw(st.integers(1, max_days))
    start = draw(st.dates(max_value=dt.date.max - dt.timedelta(days=n_days)))
    return start, start + dt.timedelta(days=n_days)


@SETTINGS
@example(boundary=(dt.date.max - dt.timedelta(days=400), dt.date.max), kind="partition_replace",
         window=[1, 1])  # the calendar's last days: the boundary ends at date.max
@given(boundary=calendar_boundaries(), kind=st.sampled_from(KINDS),
       window=st.tuples(st.integers(1, 366), st.integers(1, 366)).map(sorted))
def test_empty_boundary_has_no_children_and_an_empty_proof(
    boundary: tuple[dt.date, dt.date], kind: str, window: list[int]
) -> None:
    start, end = boundary
    oracle = RowOracle([])
    effective = limits(max_rows=10, max_decoded=1_000, max_wire=1_000,
                       window=(window[0], window[0], window[1]))
    plan = plan_children(boundary_from=start, boundary_to=end, days=[], total_rows=0,
                         limits=effective, mutation_kind=kind, oracle=oracle)
    assert plan.children == () and plan.requests == 0
    assert plan.coverage.empty and plan.coverage.intervals == ()
    assert (plan.coverage.boundary_from, plan.coverage.boundary_to) == (start, end)
    assert oracle.calls == [] and oracle.estimates == []
