"""Child topology of one frozen parent: per-day row slices, child descriptors, coverage proof.

The planner reads the sorted parent as a sequence of :class:`DaySlice` (one scope date's
contiguous rows) and returns a :class:`ChildPlan`: ordered :class:`ChildDescriptor` values and
the :class:`CoverageProof` that they cover the frozen boundary exactly once. Scopes are
half-open UTC date ranges ``[scope_from, scope_to)``; row intervals are
``[first_row, first_row + row_count)`` in the parent's sort order.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, model_validator

from dpone.contracts._base import StrictModel

RowIndex = Annotated[int, Field(ge=0)]
ByteCount = Annotated[int, Field(ge=0)]
Ordinal = Annotated[int, Field(ge=1)]

CoverageInterval = tuple[dt.date, dt.date, RowIndex, RowIndex]
"""``(scope_from, scope_to, first_row, row_count)`` of one child."""


class DaySlice(StrictModel):
    """One scope date's contiguous rows in the sorted parent (``row_count`` may be 0)."""

    day: dt.date
    first_row: RowIndex
    row_count: RowIndex


class ChildDescriptor(StrictModel):
    """One child request: its scope, its row interval and the exact sealed sizes.

    ``part``/``parts`` number the row-range parts of one scope that had to be split
    (``incremental_append`` only); an unsplit scope is part 1 of 1.
    """

    ordinal: Ordinal
    scope_from: dt.date
    scope_to: dt.date
    first_row: RowIndex
    row_count: RowIndex
    part: Ordinal
    parts: Ordinal
    decoded_bytes: ByteCount
    wire_bytes: ByteCount

    @model_validator(mode="after")
    def _shape(self) -> ChildDescriptor:
        if self.scope_from >= self.scope_to:
            raise ValueError("scope_from must be before scope_to (half-open scope)")
        if self.part > self.parts:
            raise ValueError("part must be within 1..parts")
        return self


class CoverageProof(StrictModel):
    """Proof that the children cover ``[boundary_from, boundary_to)`` and rows ``0..total_rows``.

    ``intervals`` lists every child's ``(scope_from, scope_to, first_row, row_count)`` in
    ordinal order. The three flags are constants: a proof is only ever built after the check
    passed, so a proof claiming anything else cannot be constructed. ``empty`` is true when
    the boundary holds no rows; then there are no children and no intervals.
    """

    boundary_from: dt.date
    boundary_to: dt.date
    total_rows: RowIndex
    intervals: tuple[CoverageInterval, ...]
    contiguous: Literal[True] = True
    non_overlapping: Literal[True] = True
    complete: Literal[True] = True
    empty: bool

    @model_validator(mode="after")
    def _shape(self) -> CoverageProof:
        if self.boundary_from >= self.boundary_to:
            raise ValueError("boundary_from must be before boundary_to (half-open boundary)")
        if self.empty != (self.total_rows == 0):
            raise ValueError("empty must be true exactly when total_rows is 0")
        if self.empty and self.intervals:
            raise ValueError("an empty boundary has no child intervals")
        return self


class ChildPlan(StrictModel):
    """The planner's output for one frozen parent; ``requests`` is the number of children."""

    planner_algorithm_version: Annotated[str, Field(min_length=1, max_length=128)]
    children: tuple[ChildDescriptor, ...]
    coverage: CoverageProof
    requests: RowIndex

    @model_validator(mode="after")
    def _count(self) -> ChildPlan:
        if self.requests != len(self.children):
            raise ValueError("requests must equal the number of children")
        return self
