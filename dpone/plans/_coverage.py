"""Coverage of a frozen boundary by child scopes and row intervals: build, verify, digest inputs.

A plan covers the boundary when, reading its children in ordinal order:

* the ordinals are exactly ``1..n`` and ``requests == n``;
* consecutive children with the same scope are the parts ``1..k`` of one split scope, and the
  distinct scopes are contiguous and non-overlapping: the first starts at ``boundary_from``,
  each starts where the previous ends, the last ends at ``boundary_to``;
* the row intervals are contiguous from row 0 and sum to ``total_rows``;
* the rows of each scope (all its parts together) are exactly the rows of the days in that
  scope, so every child's rows lie within its scope's days;
* the proof restates exactly these intervals, and ``empty`` holds exactly when there are no
  rows, in which case there are no children at all.

Integer and date arithmetic only; the check never trusts the proof's flags.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Sequence
from typing import TypedDict

from dpone.contracts.children import ChildDescriptor, ChildPlan, CoverageInterval, CoverageProof, DaySlice
from dpone.contracts.identity import Canonical


class ParentPlanDigestInputs(TypedDict):
    """The planner's share of ``parent_plan_digest`` keyword arguments."""

    planner_algorithm_version: str
    ordered_child_descriptors: list[dict[str, Canonical]]
    complete_coverage_proof: dict[str, Canonical]


def check_days(
    days: Sequence[DaySlice], total_rows: int, boundary_from: dt.date, boundary_to: dt.date
) -> None:
    """Raise ``ValueError`` unless ``days`` describe a sorted parent of ``total_rows`` rows.

    Days are strictly ascending, inside ``[boundary_from, boundary_to)``, and their row
    intervals are contiguous from row 0 and sum to ``total_rows``. A date absent from ``days``
    has no rows.
    """
    if boundary_from >= boundary_to:
        raise ValueError(f"boundary [{boundary_from}, {boundary_to}) is empty or reversed; "
                         "a boundary is a non-empty half-open date range")
    if total_rows < 0:
        raise ValueError(f"total_rows {total_rows} is negative")
    next_row = 0
    previous: dt.date | None = None
    for index, day in enumerate(days):
        if not boundary_from <= day.day < boundary_to:
            raise ValueError(f"days[{index}] {day.day} lies outside the boundary "
                             f"[{boundary_from}, {boundary_to})")
        if previous is not None and day.day <= previous:
            raise ValueError(f"days[{index}] {day.day} does not follow {previous}: "
                             "days must be strictly ascending")
        if day.first_row != next_row:
            raise ValueError(f"days[{index}] {day.day} starts at row {day.first_row}, "
                             f"expected {next_row}: day rows must be contiguous from row 0")
        next_row += day.row_count
        previous = day.day
    if next_row != total_rows:
        raise ValueError(f"days hold {next_row} rows but total_rows is {total_rows}")


def intervals_of(children: Sequence[ChildDescriptor]) -> tuple[CoverageInterval, ...]:
    return tuple((c.scope_from, c.scope_to, c.first_row, c.row_count) for c in children)


def coverage_proof(
    children: Sequence[ChildDescriptor], total_rows: int, boundary_from: dt.date, boundary_to: dt.date
) -> CoverageProof:
    """The proof object for ``children``; call :func:`verify_coverage` on the finished plan."""
    return CoverageProof(
        boundary_from=boundary_from,
        boundary_to=boundary_to,
        total_rows=total_rows,
        intervals=intervals_of(children),
        empty=total_rows == 0,
    )


class _ScopeRows:
    """Row range of any date range, from the sorted day slices (binary search, no scan)."""

    def __init__(self, days: Sequence[DaySlice], total_rows: int) -> None:
        self._dates = [d.day for d in days]
        self._starts = [d.first_row for d in days]
        self._total = total_rows

    def _start(self, date: dt.date) -> int:
        index = bisect.bisect_left(self._dates, date)
        return self._starts[index] if index < len(self._starts) else self._total

    def rows(self, scope_from: dt.date, scope_to: dt.date) -> tuple[int, int]:
        start = self._start(scope_from)
        return start, self._start(scope_to) - start


def _check_header(plan: ChildPlan, total_rows: int, boundary_from: dt.date, boundary_to: dt.date) -> None:
    proof = plan.coverage
    if (proof.boundary_from, proof.boundary_to) != (boundary_from, boundary_to):
        raise ValueError(f"coverage proof is over [{proof.boundary_from}, {proof.boundary_to}), "
                         f"the boundary is [{boundary_from}, {boundary_to})")
    if proof.total_rows != total_rows:
        raise ValueError(f"coverage proof counts {proof.total_rows} rows, the parent has {total_rows}")
    if plan.requests != len(plan.children):
        raise ValueError(f"plan claims {plan.requests} requests for {len(plan.children)} children")
    if proof.empty != (total_rows == 0):
        raise ValueError(f"coverage proof says empty={proof.empty} for {total_rows} rows")
    if proof.intervals != intervals_of(plan.children):
        raise ValueError("coverage proof intervals differ from the children's scopes and rows")
    for position, child in enumerate(plan.children, start=1):
        if child.ordinal != position:
            raise ValueError(f"child at position {position} has ordinal {child.ordinal}; "
                             "ordinals must be 1..n in order")


def _scope_groups(children: Sequence[ChildDescriptor]) -> list[list[ChildDescriptor]]:
    groups: list[list[ChildDescriptor]] = []
    for child in children:
        if groups and (groups[-1][0].scope_from, groups[-1][0].scope_to) == (child.scope_from,
                                                                            child.scope_to):
            groups[-1].append(child)
        else:
            groups.append([child])
    return groups


def _check_scopes(groups: list[list[ChildDescriptor]], boundary_from: dt.date,
                  boundary_to: dt.date) -> None:
    expected_from = boundary_from
    for group in groups:
        head = group[0]
        if head.scope_from != expected_from:
            kind = "gap" if head.scope_from > expected_from else "overlap"
            raise ValueError(f"child {head.ordinal} scope starts {head.scope_from}, expected "
                             f"{expected_from}: scope {kind}")
        for index, child in enumerate(group, start=1):
            if (child.part, child.parts) != (index, len(group)):
                raise ValueError(f"child {child.ordinal}: scope [{head.scope_from}, "
                                 f"{head.scope_to}) is part {child.part} of {child.parts}, "
                                 f"expected part {index} of {len(group)}")
        expected_from = head.scope_to
    if expected_from < boundary_to:
        raise ValueError(f"scopes end at {expected_from}, the boundary ends at {boundary_to}: "
                         "incomplete coverage")
    if expected_from > boundary_to:
        raise ValueError(f"scopes end at {expected_from}, past the boundary end {boundary_to}")


def _check_rows(plan: ChildPlan, groups: list[list[ChildDescriptor]], scope_rows: _ScopeRows,
                total_rows: int) -> None:
    next_row = 0
    for child in plan.children:
        if child.first_row != next_row:
            kind = "gap" if child.first_row > next_row else "overlap"
            raise ValueError(f"child {child.ordinal} starts at row {child.first_row}, expected "
                             f"{next_row}: row {kind}")
        next_row += child.row_count
    if next_row != total_rows:
        raise ValueError(f"children carry {next_row} rows, the parent has {total_rows}")
    for group in groups:
        head, tail = group[0], group[-1]
        where = f"scope [{head.scope_from}, {head.scope_to})"
        if len(group) > 1 and any(child.row_count == 0 for child in group):
            raise ValueError(f"children {head.ordinal}..{tail.ordinal}: a part of split {where} "
                             "has no rows")
        start, count = scope_rows.rows(head.scope_from, head.scope_to)
        covered = (head.first_row, tail.first_row + tail.row_count - head.first_row)
        if covered != (start, count):
            raise ValueError(f"children {head.ordinal}..{tail.ordinal}: {where} carries rows "
                             f"[{covered[0]}, {covered[0] + covered[1]}) but its days hold rows "
                             f"[{start}, {start + count})")


def verify_coverage(
    plan: ChildPlan,
    days: Sequence[DaySlice],
    total_rows: int,
    boundary_from: dt.date,
    boundary_to: dt.date,
) -> None:
    """Raise ``ValueError`` naming the first defect unless ``plan`` covers the boundary exactly.

    See the module docstring for the complete list of conditions. Checked in this order: the
    input days, the proof and ordinals, the scopes (dates), then the rows.
    """
    check_days(days, total_rows, boundary_from, boundary_to)
    _check_header(plan, total_rows, boundary_from, boundary_to)
    if total_rows == 0:
        if plan.children:
            raise ValueError(f"an empty boundary must have no children, found {len(plan.children)}")
        return
    if not plan.children:
        raise ValueError(f"{total_rows} rows but no children")
    groups = _scope_groups(plan.children)
    _check_scopes(groups, boundary_from, boundary_to)
    _check_rows(plan, groups, _ScopeRows(days, total_rows), total_rows)


def _descriptor(child: ChildDescriptor) -> dict[str, Canonical]:
    return {
        "ordinal": child.ordinal,
        "scope_from": child.scope_from,
        "scope_to": child.scope_to,
        "first_row": child.first_row,
        "row_count": child.row_count,
        "part": child.part,
        "parts": child.parts,
        "decoded_bytes": child.decoded_bytes,
        "wire_bytes": child.wire_bytes,
    }


def child_plan_digest(plan: ChildPlan) -> ParentPlanDigestInputs:
    """The plan's inputs to ``parent_plan_digest`` as canonical values (dates stay dates).

    Pass them on with the parent, compiled-plan and profile digests::

        parent_plan_digest(frozen_parent_digest=..., compiled_plan_digest=...,
                           profile_contract_digest=..., **child_plan_digest(plan))
    """
    proof = plan.coverage
    intervals: list[Canonical] = [list(interval) for interval in proof.intervals]
    return {
        "planner_algorithm_version": plan.planner_algorithm_version,
        "ordered_child_descriptors": [_descriptor(child) for child in plan.children],
        "complete_coverage_proof": {
            "boundary_from": proof.boundary_from,
            "boundary_to": proof.boundary_to,
            "total_rows": proof.total_rows,
            "intervals": intervals,
            "contiguous": proof.contiguous,
            "non_overlapping": proof.non_overlapping,
            "complete": proof.complete,
            "empty": proof.empty,
        },
    }
