"""The child budget: a boundary plans at most ``limits.max_children`` children, or fails fast."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from pydantic import ValidationError
from test_planner_properties import SETTINGS, Source, sources

from dpone.contracts import DponeError
from dpone.contracts.plan import EffectiveLimits
from dpone.contracts.profile import Limits
from dpone.plans import plan_children
from support.plans import AUGUST, RowOracle, day_slices, limits, row_sizes

D = dt.date


def _budget(effective: EffectiveLimits, max_children: int) -> EffectiveLimits:
    return EffectiveLimits.model_validate({**effective.model_dump(), "max_children": max_children})


def _refusal(start: dt.date, end: dt.date, counts: list[int], effective: EffectiveLimits,
             oracle: RowOracle) -> DponeError:
    """The planner's refusal for rows ``counts`` on the first days from ``start``."""
    days, total = day_slices(start, counts)
    with pytest.raises(DponeError) as caught:
        plan_children(boundary_from=start, boundary_to=end, days=days, total_rows=total,
                      limits=effective, mutation_kind="partition_replace", oracle=oracle)
    return caught.value


def test_the_default_budget_is_ten_thousand_and_bounded() -> None:
    effective = limits(max_rows=100, max_decoded=10_000, max_wire=10_000)
    assert effective.max_children == 10_000
    for bad in (0, 100_001):
        with pytest.raises(ValidationError, match="max_children"):
            Limits.model_validate({**effective.model_dump(exclude={"window_days"}),
                                   "max_children": bad})


def test_a_boundary_of_millennia_fails_before_any_size_is_read() -> None:
    # 0001-01-01..9999-12-31 with a few rows: at least ceil(3,652,058 / 3) windows.
    oracle = RowOracle(row_sizes(3, 1))
    error = _refusal(D(1, 1, 1), D(9999, 12, 31), [3],
                     limits(max_rows=100, max_decoded=10_000, max_wire=10_000, window=(3, 1, 4)),
                     oracle)
    assert oracle.estimates == [] and oracle.calls == []
    assert error.code == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT" and error.exit_code == 2
    assert error.details == {"boundary_from": "0001-01-01", "boundary_to": "9999-12-31",
                             "days": 3_652_058, "children": 1_217_353, "children_exact": False,
                             "max_children": 10_000, "window_days": 3}
    assert error.message.startswith("boundary [0001-01-01, 9999-12-31) of 3652058 day(s) needs "
                                    "at least 1217353 children, over limits.max_children 10000")
    assert "Shrink the interval" in error.fix_hint and "limits.max_children" in error.fix_hint
    assert error.to_document()["schema"] == "dpone.error.v1"


def test_rows_alone_can_bound_the_children_from_below() -> None:
    # One day, 500 rows, max_rows 100: at least 5 children although 1 window would do.
    oracle = RowOracle(row_sizes(500, 2))
    error = _refusal(AUGUST, AUGUST + dt.timedelta(days=1), [500],
                     _budget(limits(max_rows=100, max_decoded=10**9, max_wire=10**9), 4), oracle)
    assert (error.details["children"], error.details["children_exact"]) == (5, False)
    assert oracle.calls == []


def test_planning_stops_once_the_budget_is_certainly_exceeded() -> None:
    # 10 days of 90 rows under planning rows 100: every window is one day although 5 are
    # preferred. The bound before planning (2) fits a budget of 3; after the second window,
    # 2 planned + ceil(8 days / 5) = 4 > 3, so planning stops there.
    counts = [90] * 10
    days, total = day_slices(AUGUST, counts)
    oracle = RowOracle(row_sizes(total, 3))
    effective = _budget(limits(max_rows=1_000, planning_rows=100, max_decoded=10**9,
                               max_wire=10**9, window=(5, 1, 5)), 3)
    with pytest.raises(DponeError) as caught:
        plan_children(boundary_from=AUGUST, boundary_to=AUGUST + dt.timedelta(days=10), days=days,
                      total_rows=total, limits=effective, mutation_kind="partition_replace",
                      oracle=oracle)
    assert (caught.value.details["children"], caught.value.details["children_exact"]) == (4, False)
    assert {first for first, _ in oracle.calls} == {0, 90}  # only two windows were measured


@pytest.mark.parametrize(("budget", "fails"), [(2, True), (3, False)])
def test_the_exact_count_is_checked_after_the_last_window(budget: int, fails: bool) -> None:
    # One appended day of 250 rows under planning rows 100 (hard max 1,000): the lower bound
    # is 1 child, the plan has 3 parts; only the exact count can refuse it.
    days, total = day_slices(AUGUST, [250])
    effective = _budget(limits(max_rows=1_000, planning_rows=100, max_decoded=10**9,
                               max_wire=10**9), budget)
    kwargs = {"boundary_from": AUGUST, "boundary_to": AUGUST + dt.timedelta(days=1),
              "days": days, "total_rows": total, "limits": effective,
              "mutation_kind": "incremental_append", "oracle": RowOracle(row_sizes(total, 4))}
    if not fails:
        assert plan_children(**kwargs).requests == 3
        return
    with pytest.raises(DponeError) as caught:
        plan_children(**kwargs)
    assert (caught.value.details["children"], caught.value.details["children_exact"]) == (3, True)
    assert "needs 3 children, over limits.max_children 2" in caught.value.message


def test_a_boundary_without_rows_has_no_children_whatever_its_length() -> None:
    effective = _budget(limits(max_rows=10, max_decoded=1_000, max_wire=1_000), 1)
    plan = plan_children(boundary_from=D(1, 1, 1), boundary_to=D(9999, 12, 31), days=[],
                         total_rows=0, limits=effective, mutation_kind="incremental_append",
                         oracle=RowOracle([]))
    assert plan.requests == 0 and plan.coverage.empty


@SETTINGS
@given(sources())
def test_the_budget_refuses_exactly_the_plans_over_it(source: Source) -> None:
    try:
        unlimited = source.plan()
    except DponeError:
        return
    for budget in {max(1, unlimited.requests - 1), max(1, unlimited.requests)}:
        source.limits = _budget(source.limits, budget)
        if unlimited.requests <= budget:
            assert source.plan() == unlimited
            continue
        with pytest.raises(DponeError) as caught:
            source.plan()
        details = caught.value.details
        assert caught.value.code == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT"
        assert budget < details["children"] <= unlimited.requests  # a true lower bound
        if details["children_exact"]:
            assert details["children"] == unlimited.requests
