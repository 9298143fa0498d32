"""verify_coverage names each defect of a tampered plan; the child models refuse bad shapes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest
from pydantic import ValidationError

from dpone.contracts.children import ChildDescriptor, ChildPlan, CoverageProof, DaySlice
from dpone.plans import plan_children, verify_coverage
from support.plans import AUGUST, RowOracle, day_slices, limits, row_sizes

D = dt.date
COUNTS = [10, 0, 30, 5, 0, 0, 20, 8]  # 73 rows over 2026-08-01 .. 2026-08-08
END = D(2026, 8, 9)
DAYS, TOTAL = day_slices(AUGUST, COUNTS)


def _valid() -> ChildPlan:
    """Five scopes, one day split in two parts (incremental_append, planning_rows 25)."""
    effective = limits(max_rows=40, planning_rows=25, max_decoded=100_000, max_wire=100_000,
                       window=(3, 1, 3))
    return plan_children(boundary_from=AUGUST, boundary_to=END, days=DAYS, total_rows=TOTAL,
                         limits=effective, mutation_kind="incremental_append",
                         oracle=RowOracle(row_sizes(TOTAL, 3)))


def _with(children: list[ChildDescriptor], plan: ChildPlan | None = None) -> ChildPlan:
    """A plan over ``children`` whose proof restates them (so deeper checks are reached)."""
    plan = plan or _valid()
    proof = plan.coverage.model_copy(update={
        "intervals": tuple((c.scope_from, c.scope_to, c.first_row, c.row_count) for c in children)})
    return ChildPlan(planner_algorithm_version=plan.planner_algorithm_version,
                     children=tuple(children), coverage=proof, requests=len(children))


def _edit(index: int, **update: object) -> Callable[[list[ChildDescriptor]], list[ChildDescriptor]]:
    def apply(children: list[ChildDescriptor]) -> list[ChildDescriptor]:
        children[index] = children[index].model_copy(update=update)
        return children
    return apply


def test_the_valid_plan_shape() -> None:
    plan = _valid()
    verify_coverage(plan, DAYS, TOTAL, AUGUST, END)
    assert [((c.scope_from.day, c.scope_to.day), c.first_row, c.row_count, c.part, c.parts)
            for c in plan.children] == [
        ((1, 3), 0, 10, 1, 1), ((3, 4), 10, 25, 1, 2), ((3, 4), 35, 5, 2, 2),
        ((4, 7), 40, 5, 1, 1), ((7, 8), 45, 20, 1, 1), ((8, 9), 65, 8, 1, 1)]


TAMPERING: list[tuple[str, Callable[[list[ChildDescriptor]], list[ChildDescriptor]], str]] = [
    ("ordinal", _edit(1, ordinal=7), "has ordinal 7"),
    ("scope gap", lambda cs: [cs[0].model_copy(update={"scope_to": D(2026, 8, 2)}), *cs[1:]],
     "scope gap"),
    ("scope overlap", _edit(0, scope_to=D(2026, 8, 4)), "scope overlap"),
    ("starts late", _edit(0, scope_from=D(2026, 8, 2)), "scope gap"),
    ("incomplete", lambda cs: [*cs[:4], cs[4].model_copy(update={"row_count": 28})],
     "incomplete coverage"),
    ("past the end", _edit(5, scope_to=D(2026, 8, 10)), "past the boundary end"),
    ("row gap", _edit(3, first_row=41, row_count=4), "row gap"),
    ("row overlap", _edit(3, first_row=39, row_count=6), "row overlap"),
    ("row total", _edit(5, row_count=7), "children carry 72 rows"),
    ("rows outside scope", lambda cs: [cs[0].model_copy(update={"row_count": 11}),
                                       cs[1].model_copy(update={"first_row": 11, "row_count": 24}),
                                       *cs[2:]],
     r"carries rows \[0, 11\) but its days hold rows \[0, 10\)"),
    ("part numbering", _edit(2, part=1), "part 1 of 2, expected part 2 of 2"),
    ("parts count", _edit(0, parts=2), "part 1 of 2, expected part 1 of 1"),
    ("dropped child", lambda cs: [*cs[:4], cs[4].model_copy(update={"scope_to": END})],
     "children carry 65 rows"),
]


@pytest.mark.parametrize(("name", "tamper", "message"), TAMPERING, ids=[t[0] for t in TAMPERING])
def test_tampered_plans_are_refused(name: str, tamper, message: str) -> None:
    plan = _with(tamper(list(_valid().children)))
    with pytest.raises(ValueError, match=message):
        verify_coverage(plan, DAYS, TOTAL, AUGUST, END)


def test_a_split_part_without_rows_is_refused() -> None:
    children = list(_valid().children)
    children[1] = children[1].model_copy(update={"row_count": 30})
    children[2] = children[2].model_copy(update={"first_row": 40, "row_count": 0})
    with pytest.raises(ValueError, match=r"a part of split scope \[2026-08-03, 2026-08-04\) has no rows"):
        verify_coverage(_with(children), DAYS, TOTAL, AUGUST, END)


def test_the_proof_must_restate_the_children_and_the_boundary() -> None:
    plan = _valid()
    tampered = plan.model_copy(update={"coverage": plan.coverage.model_copy(
        update={"intervals": plan.coverage.intervals[:-1]})})
    with pytest.raises(ValueError, match="intervals differ"):
        verify_coverage(tampered, DAYS, TOTAL, AUGUST, END)
    with pytest.raises(ValueError, match="coverage proof is over"):
        verify_coverage(plan, DAYS, TOTAL, AUGUST, D(2026, 8, 10))
    with pytest.raises(ValueError, match="counts 73 rows, the parent has 74"):
        verify_coverage(plan, [*DAYS[:-1], DAYS[-1].model_copy(update={"row_count": 9})], 74,
                        AUGUST, END)
    with pytest.raises(ValueError, match="claims 4 requests"):
        verify_coverage(plan.model_copy(update={"requests": 4}), DAYS, TOTAL, AUGUST, END)


def test_an_empty_boundary_has_no_children() -> None:
    plan = _valid()
    empty_proof = CoverageProof(boundary_from=AUGUST, boundary_to=END, total_rows=0,
                                intervals=(), empty=True)
    verify_coverage(ChildPlan(planner_algorithm_version="v", children=(), coverage=empty_proof,
                              requests=0), [], 0, AUGUST, END)
    with pytest.raises(ValueError, match="intervals differ"):
        verify_coverage(plan.model_copy(update={"coverage": empty_proof}), [], 0, AUGUST, END)
    unchecked = empty_proof.model_copy(update={"intervals": plan.coverage.intervals})
    with pytest.raises(ValueError, match="an empty boundary must have no children, found 6"):
        verify_coverage(plan.model_copy(update={"coverage": unchecked}), [], 0, AUGUST, END)
    no_children = ChildPlan(planner_algorithm_version="v", children=(),
                            coverage=plan.coverage.model_copy(update={"intervals": ()}), requests=0)
    with pytest.raises(ValueError, match="73 rows but no children"):
        verify_coverage(no_children, DAYS, TOTAL, AUGUST, END)


def test_models_refuse_inconsistent_shapes() -> None:
    child = _valid().children[0]
    with pytest.raises(ValidationError, match="scope_from must be before scope_to"):
        ChildDescriptor(**{**child.model_dump(), "scope_to": child.scope_from})
    with pytest.raises(ValidationError, match="part must be within"):
        ChildDescriptor(**{**child.model_dump(), "part": 2})
    with pytest.raises(ValidationError):
        DaySlice(day=AUGUST, first_row=-1, row_count=1)
    with pytest.raises(ValidationError):
        DaySlice(day="2026-08-01", first_row=0, row_count=1)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="empty must be true exactly"):
        CoverageProof(boundary_from=AUGUST, boundary_to=END, total_rows=3, intervals=(), empty=True)
    with pytest.raises(ValidationError):
        CoverageProof(boundary_from=AUGUST, boundary_to=END, total_rows=0, intervals=(),
                      empty=True, complete=False)  # type: ignore[arg-type]
    proof = _valid().coverage
    with pytest.raises(ValidationError, match="requests must equal"):
        ChildPlan(planner_algorithm_version="v", children=(child,), coverage=proof, requests=2)
    with pytest.raises(ValidationError, match="frozen"):
        child.ordinal = 2  # type: ignore[misc]
