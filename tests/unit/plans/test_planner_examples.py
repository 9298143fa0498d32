"""Worked examples of the adaptive planner: the sample distribution, each rule, each failure."""

from __future__ import annotations

import datetime as dt

import pytest

import dpone.plans
from dpone.contracts import DponeError
from dpone.contracts.children import DaySlice
from dpone.contracts.identity import parent_plan_digest
from dpone.contracts.plan import PLANNER_ALGORITHM_VERSION, EffectiveLimits
from dpone.plans import (
    FIXED_WIDTH_ALGORITHM_VERSION,
    child_plan_digest,
    fixed_width_children,
    limit_violations,
    plan_children,
    verify_coverage,
)
from support.plans import AUGUST, RowOracle, day_slices, example_counts, limits, row_sizes

D = dt.date
DIGEST = "sha256:" + "0f" * 32
AUGUST_END = D(2026, 9, 1)
# Tight limits for the sample distribution (CSV rows of 60..100 bytes): a 3-day fixed window
# over the mid-month spike (3 x 240 rows) breaks max_rows.
TIGHT = limits(max_rows=500, planning_rows=400, max_decoded=40_000, max_wire=16_000,
               window=(3, 1, 7))


def _plan(counts: list[int], effective: EffectiveLimits, kind: str = "partition_replace",
          start: dt.date = AUGUST, oracle: RowOracle | None = None, sizes: list[int] | None = None):
    days, total = day_slices(start, counts)
    oracle = oracle or RowOracle(sizes if sizes is not None else row_sizes(total, 7, 60, 100))
    plan = plan_children(boundary_from=start, boundary_to=start + dt.timedelta(days=len(counts)),
                         days=days, total_rows=total, limits=effective, mutation_kind=kind,
                         oracle=oracle)
    return plan, oracle


def _spans(plan) -> list[tuple[int, int]]:
    return [((c.scope_to - c.scope_from).days, c.row_count) for c in plan.children]


def test_public_api_is_pinned() -> None:
    assert sorted(dpone.plans.__all__) == [
        "CONSEQUENCES", "Change", "Consequence", "FIXED_WIDTH_ALGORITHM_VERSION",
        "IDENTITY_MEANING", "MEANING", "Measured", "ParentPlanDigestInputs", "PlanDiff",
        "SizeOracle", "child_plan_digest", "diff_plans", "fixed_width_children", "golden_files",
        "golden_name", "golden_text", "limit_violations", "plan_children", "plan_key",
        "plan_path", "publish_plan", "read_plan", "read_plan_bytes", "read_plan_file",
        "read_published_plan", "read_published_plan_bytes", "verify_coverage", "write_plan"]


def _widest_safe_fixed_width(days: list[DaySlice], total: int, sizes: list[int],
                             effective: EffectiveLimits) -> tuple[int, int]:
    """The widest fixed window (<= window_days) without a limit violation, and its requests."""
    for width in range(effective.window_days, 0, -1):
        fixed = fixed_width_children(boundary_from=AUGUST, boundary_to=AUGUST_END, days=days,
                                     total_rows=total, limits=effective, oracle=RowOracle(sizes),
                                     window_days=width)
        if limit_violations(fixed, effective) == ():
            return width, fixed.requests
    raise AssertionError("no fixed width stays within the limits")


@pytest.mark.parametrize("kind", ["partition_replace", "incremental_append"])
def test_sample_distribution_adaptive_beats_fixed_width(kind: str) -> None:
    counts = example_counts()
    assert (sum(counts), len(counts)) == (3203, 31)
    days, total = day_slices(AUGUST, counts)
    sizes = row_sizes(total, 7, 60, 100)
    adaptive_oracle, fixed_oracle = RowOracle(sizes), RowOracle(sizes)
    adaptive, _ = _plan(counts, TIGHT, kind, oracle=adaptive_oracle)
    fixed = fixed_width_children(boundary_from=AUGUST, boundary_to=AUGUST_END, days=days,
                                 total_rows=total, limits=TIGHT, oracle=fixed_oracle)
    assert fixed.planner_algorithm_version == FIXED_WIDTH_ALGORITHM_VERSION
    assert adaptive.planner_algorithm_version == PLANNER_ALGORITHM_VERSION
    # Fixed windows of the preferred 3 days are the fewest requests any plan can have, and
    # they break max_rows over the mid-month spike; the adaptive plan shortens only there.
    assert limit_violations(adaptive, TIGHT) == ()
    assert (adaptive.requests, fixed.requests, limit_violations(fixed, TIGHT)) == (12, 11, (5,))
    # The fixed width an operator would need to stay within the limits costs more requests.
    assert _widest_safe_fixed_width(days, total, sizes, TIGHT) == (2, 16)
    # One estimate per day and one exact measurement per child (the estimate is exact here).
    assert len(adaptive_oracle.estimates) == 31 and fixed_oracle.estimates == []
    assert len(adaptive_oracle.calls) == adaptive.requests
    assert len(fixed_oracle.calls) == fixed.requests


def test_windows_grow_to_the_preferred_days_over_thin_data_and_cover_empty_days() -> None:
    counts = [5] + [0] * 9 + [5]
    plan, oracle = _plan(counts, limits(max_rows=100, max_decoded=10_000, max_wire=10_000,
                                        window=(4, 1, 7)))
    assert _spans(plan) == [(4, 5), (4, 0), (3, 5)]
    assert plan.children[1].first_row == 5  # the empty window sits between the two days' rows
    assert (5, 0) in oracle.calls  # an empty child is measured: its payload has no data rows
    assert [c.ordinal for c in plan.children] == [1, 2, 3]


@pytest.mark.parametrize("preferred", [1, 2, 3, 4])
def test_windows_are_at_most_the_preferred_days_not_the_profile_max(preferred: int) -> None:
    # Thin data far below every limit: only the preference bounds the windows, and the
    # profile's max (4) is not used unless preferred.
    counts = [3, 0, 1, 2, 0, 0, 5, 1, 0, 4, 2]
    plan, _ = _plan(counts, limits(max_rows=1_000, max_decoded=1_000_000, max_wire=1_000_000,
                                   window=(preferred, 1, 4)))
    lengths = [days for days, _ in _spans(plan)]
    assert lengths == [preferred] * (len(counts) // preferred) + (
        [len(counts) % preferred] if len(counts) % preferred else [])


def test_a_heavy_day_shortens_the_window_below_min() -> None:
    # min 3: days 0 and 1 are light; day 2 alone is over the planning rows.
    counts = [10, 10, 90, 10, 10, 10]
    plan, _ = _plan(counts, limits(max_rows=100, planning_rows=50, max_decoded=100_000,
                                   max_wire=100_000, window=(3, 3, 5)))
    assert _spans(plan) == [(2, 20), (1, 90), (3, 30)]
    over_planning = plan.children[1]
    assert over_planning.row_count > 50  # an atomic day within the hard max is sent whole


def test_partition_replace_day_over_a_hard_max_fails_naming_day_rows_and_bytes() -> None:
    counts = [10, 10, 120, 10]
    with pytest.raises(DponeError) as caught:
        _plan(counts, limits(max_rows=100, max_decoded=100_000, max_wire=100_000))
    error = caught.value
    assert error.code == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT"
    assert error.exit_code == 2
    assert "2026-08-03" in error.message and "120 rows" in error.message
    assert "max_rows 100" in error.message
    document = error.to_document()
    assert document["details"]["day"] == "2026-08-03"
    assert document["details"]["rows"] == 120
    assert document["details"]["exceeded"] == ["max_rows 100"]
    assert document["details"]["decoded_bytes"] > 0 and document["details"]["wire_bytes"] > 0


def test_incremental_append_splits_a_heavy_day_into_row_parts() -> None:
    counts = [10, 1000, 10]
    plan, _ = _plan(counts, limits(max_rows=400, planning_rows=300, max_decoded=1_000_000,
                                   max_wire=1_000_000), kind="incremental_append")
    day = [c for c in plan.children if c.scope_from == D(2026, 8, 2)]
    assert [(c.part, c.parts, c.row_count) for c in day] == [
        (1, 4, 300), (2, 4, 300), (3, 4, 300), (4, 4, 100)]
    assert all(c.scope_to == D(2026, 8, 3) for c in day)
    assert [c.first_row for c in day] == [10, 310, 610, 910]


def test_incremental_append_fails_on_one_row_over_a_hard_max() -> None:
    sizes = [50] * 30
    sizes[17] = 5_000
    with pytest.raises(DponeError) as caught:
        _plan([10, 20], limits(max_rows=100, max_decoded=2_000, max_wire=2_000),
              kind="incremental_append", sizes=sizes)
    assert caught.value.code == "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT"
    assert caught.value.details["row"] == 17
    assert caught.value.details["day"] == "2026-08-02"


def test_one_row_over_planning_but_within_hard_is_its_own_part() -> None:
    sizes = [50] * 20
    sizes[5] = 1_500
    plan, _ = _plan([20], limits(max_rows=100, max_decoded=2_000, max_wire=2_000,
                                 planning_pct=50), kind="incremental_append", sizes=sizes)
    assert [c.row_count for c in plan.children][:3] == [5, 1, 14]
    assert limit_violations(plan, limits(max_rows=100, max_decoded=2_000, max_wire=2_000)) == ()


def test_a_window_over_its_estimate_shrinks_by_whole_days() -> None:
    # Superadditive sizes: each day is small, but the quadratic term makes a long window
    # larger than the sum of its days, so verification fails and the window shrinks.
    counts = [100] * 8
    sizes = [10] * 800
    oracle = RowOracle(sizes, quadratic_div=20)
    effective = limits(max_rows=10_000, max_decoded=12_000, max_wire=100_000, planning_pct=100,
                       window=(4, 1, 8))
    plan, _ = _plan(counts, effective, oracle=oracle)
    assert all(c.decoded_bytes <= 12_000 for c in plan.children)
    assert _spans(plan) == [(3, 300), (3, 300), (2, 200)]
    assert len(oracle.calls) > plan.requests  # the shrink cost extra exact measurements


def test_same_inputs_same_plan_and_parent_digest() -> None:
    counts = example_counts()
    first, _ = _plan(counts, TIGHT)
    second, _ = _plan(counts, TIGHT)
    assert first == second
    inputs = child_plan_digest(first)
    assert isinstance(inputs["complete_coverage_proof"]["boundary_from"], dt.date)
    assert isinstance(inputs["ordered_child_descriptors"][0]["scope_from"], dt.date)
    digest = parent_plan_digest(frozen_parent_digest=DIGEST, compiled_plan_digest=DIGEST,
                                profile_contract_digest=DIGEST, **inputs)
    assert digest == parent_plan_digest(frozen_parent_digest=DIGEST, compiled_plan_digest=DIGEST,
                                        profile_contract_digest=DIGEST, **child_plan_digest(second))
    looser, _ = _plan(counts, limits(max_rows=2000, max_decoded=64_000, max_wire=24_000))
    assert parent_plan_digest(frozen_parent_digest=DIGEST, compiled_plan_digest=DIGEST,
                              profile_contract_digest=DIGEST, **child_plan_digest(looser)) != digest
    other_version = plan_children(
        boundary_from=AUGUST, boundary_to=AUGUST_END, days=day_slices(AUGUST, counts)[0],
        total_rows=3203, limits=TIGHT, mutation_kind="partition_replace",
        oracle=RowOracle(row_sizes(3203, 7, 60, 100)), algorithm_version="dpone.other.v2")
    assert other_version.children == first.children
    assert child_plan_digest(other_version) != inputs


def test_fixed_width_windows_and_empty_boundary() -> None:
    counts = [3, 0, 4, 1, 0, 0, 2]
    days, total = day_slices(AUGUST, counts)
    oracle = RowOracle(row_sizes(total, 1))
    plan = fixed_width_children(boundary_from=AUGUST, boundary_to=D(2026, 8, 8), days=days,
                                total_rows=total, limits=TIGHT, oracle=oracle)
    assert _spans(plan) == [(3, 7), (3, 1), (1, 2)]
    empty = fixed_width_children(boundary_from=AUGUST, boundary_to=D(2026, 8, 8), days=[],
                                 total_rows=0, limits=TIGHT, oracle=oracle)
    assert empty.children == () and empty.coverage.empty


@pytest.mark.parametrize(("days", "total", "bounds", "message"), [
    ([], 0, (D(2026, 8, 2), D(2026, 8, 2)), "empty or reversed"),
    ([], 0, (D(2026, 8, 3), D(2026, 8, 1)), "empty or reversed"),
    ([DaySlice(day=D(2026, 7, 31), first_row=0, row_count=1)], 1, None, "outside the boundary"),
    ([DaySlice(day=D(2026, 8, 5), first_row=0, row_count=1)], 1, None, "outside the boundary"),
    ([DaySlice(day=D(2026, 8, 2), first_row=0, row_count=1),
      DaySlice(day=D(2026, 8, 1), first_row=1, row_count=1)], 2, None, "strictly ascending"),
    ([DaySlice(day=D(2026, 8, 1), first_row=0, row_count=1),
      DaySlice(day=D(2026, 8, 1), first_row=1, row_count=1)], 2, None, "strictly ascending"),
    ([DaySlice(day=D(2026, 8, 1), first_row=1, row_count=1)], 1, None, "contiguous from row 0"),
    ([DaySlice(day=D(2026, 8, 1), first_row=0, row_count=2)], 3, None, "total_rows is 3"),
])
def test_inconsistent_input_is_refused(days, total, bounds, message) -> None:
    start, end = bounds or (AUGUST, D(2026, 8, 5))
    with pytest.raises(ValueError, match=message):
        plan_children(boundary_from=start, boundary_to=end, days=days, total_rows=total,
                      limits=TIGHT, mutation_kind="partition_replace", oracle=RowOracle([0] * 3))


def test_unknown_mutation_kind_and_bad_oracle_are_refused() -> None:
    days, total = day_slices(AUGUST, [2])
    with pytest.raises(ValueError, match="mutation_kind 'upsert'"):
        plan_children(boundary_from=AUGUST, boundary_to=D(2026, 8, 2), days=days,
                      total_rows=total, limits=TIGHT, mutation_kind="upsert",
                      oracle=RowOracle([1, 1]))

    class Negative:
        def estimate(self, first_row: int, row_count: int) -> dpone.plans.Measured:
            return dpone.plans.Measured(decoded_bytes=1, wire_bytes=1)

        def measure(self, first_row: int, row_count: int) -> dpone.plans.Measured:
            return dpone.plans.Measured(decoded_bytes=-1, wire_bytes=0)

    with pytest.raises(ValueError, match="non-negative integers"):
        plan_children(boundary_from=AUGUST, boundary_to=D(2026, 8, 2), days=days,
                      total_rows=total, limits=TIGHT, mutation_kind="partition_replace",
                      oracle=Negative())


@pytest.mark.parametrize(("factor", "shrinks"), [((1, 2), True), ((2, 1), False)])
def test_inexact_estimates_never_break_a_limit(factor: tuple[int, int], shrinks: bool) -> None:
    counts = example_counts()
    days, total = day_slices(AUGUST, counts)
    sizes = row_sizes(total, 7, 60, 100)
    by_bytes = limits(max_rows=10_000, max_decoded=40_000, max_wire=100_000, window=(3, 1, 7))
    exact, _ = _plan(counts, by_bytes, sizes=sizes)
    oracle = RowOracle(sizes, estimate_factors=(factor,))
    plan, _ = _plan(counts, by_bytes, oracle=oracle)
    assert limit_violations(plan, by_bytes) == ()
    verify_coverage(plan, days, total, AUGUST, AUGUST_END)
    for child in plan.children:
        size = oracle.exact(child.first_row, child.row_count)
        assert (child.decoded_bytes, child.wire_bytes) == (size.decoded_bytes, size.wire_bytes)
    if shrinks:  # too low: windows are proposed too long, verified and shrunk to the exact fit
        assert len(oracle.calls) > plan.requests
        assert plan.requests == exact.requests
    else:  # too high: windows are shorter than they could be, never re-measured
        assert len(oracle.calls) <= plan.requests
        assert plan.requests >= exact.requests


def test_an_appended_day_over_the_planning_rows_is_split_without_measuring_it_whole() -> None:
    counts = [10, 1000, 10]
    plan, oracle = _plan(counts, limits(max_rows=400, planning_rows=300, max_decoded=1_000_000,
                                        max_wire=1_000_000), kind="incremental_append")
    assert (10, 1000) not in oracle.calls
    assert [c.row_count for c in plan.children] == [10, 300, 300, 300, 100, 10]
    assert len(oracle.calls) == plan.requests
