"""The admission and pre-submit fence rules as pure functions over candidate rows.

Spec "Replacement generation and overlap fence": scopes are half-open date ranges; a
generation is the ordered pair (scheduled_interval_end_utc, correction_revision). The adapters
fetch the rows of one effect-conflict domain that overlap a scope (under the domain lock) and
ask these functions for a refusal; the replacement watermark is a normalized, non-overlapping
interval map that ``merge_watermark`` maintains.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from dpone.contracts._errors import DponeError

GenerationKey = tuple[dt.datetime, int]

IN_FLIGHT_EXECUTION = frozenset({"SUBMITTING", "ACCEPTED", "WAITING", "VERIFYING"})
UNRESOLVED_EFFECTS = frozenset({"UNDETERMINED", "UNKNOWN", "PARTIALLY_APPLIED"})


@dataclass(frozen=True, slots=True)
class Scope:
    """A half-open date range ``[lo, hi)``."""

    lo: dt.date
    hi: dt.date

    def overlaps(self, other: Scope) -> bool:
        return self.lo < other.hi and other.lo < self.hi


@dataclass(frozen=True, slots=True)
class FenceRow:
    """An admitted child of the same effect-conflict domain."""

    operation_id: str
    parent_id: str
    delivery_key: str
    mutation_intent_digest: str
    mutation_kind: str
    generation: GenerationKey
    scope: Scope
    execution_state: str
    remote_effect: str
    reconciled: bool = False
    """The current tuple was recorded by an operator reconciliation."""

    @property
    def in_flight(self) -> bool:
        """SUBMITTING, accepted/running with an undetermined effect, UNKNOWN, or a
        PARTIALLY_APPLIED effect no operator has reconciled yet (the overlap waits for its
        reconciliation; once an operator confirmed what the older generation applied, a higher
        generation may replace the scope)."""
        return (self.execution_state in IN_FLIGHT_EXECUTION or self.remote_effect == "UNKNOWN"
                or (self.remote_effect == "PARTIALLY_APPLIED" and not self.reconciled))


@dataclass(frozen=True, slots=True)
class Candidate:
    """A child asking to be admitted or to enter SUBMITTING."""

    parent_id: str
    delivery_key: str
    mutation_kind: str
    generation: GenerationKey
    scope: Scope
    operation_id: str | None = None


@dataclass(frozen=True, slots=True)
class Interval:
    """One entry of the watermark map: ``scope`` is covered up to ``generation``."""

    scope: Scope
    generation: GenerationKey


def _error(code: str, message: str, candidate: Candidate, other: str | None) -> DponeError:
    return DponeError(code=code, message=message, operation_id=candidate.operation_id,
                      details={"delivery_key": candidate.delivery_key,
                               "conflicting_operation_id": other})


def _render(generation: GenerationKey) -> str:
    return f"({generation[0].isoformat()}, {generation[1]})"


def _stale_refusal(candidate: Candidate, rows: Sequence[FenceRow],
                   watermarks: Sequence[Interval]) -> DponeError | None:
    """A higher generation admitted or applied over an overlapping scope makes ``candidate``
    stale; the refusal names the highest one (an admitted row before a watermark of the same
    generation: it has an operation to inspect)."""
    newer = [row for row in rows if row.operation_id != candidate.operation_id
             and row.scope.overlaps(candidate.scope) and row.generation > candidate.generation]
    marks = [mark for mark in watermarks
             if mark.scope.overlaps(candidate.scope) and mark.generation > candidate.generation]
    row = max(newer, key=lambda r: r.generation, default=None)
    mark = max(marks, key=lambda m: m.generation, default=None)
    if row is not None and (mark is None or row.generation >= mark.generation):
        return _error("REST_DELIVERY_STALE_GENERATION",
                      f"generation {_render(row.generation)} is admitted for an overlapping "
                      f"scope; {_render(candidate.generation)} is stale", candidate,
                      row.operation_id)
    if mark is not None:
        return _error("REST_DELIVERY_STALE_GENERATION",
                      f"generation {_render(mark.generation)} is fully applied over an "
                      f"overlapping scope; {_render(candidate.generation)} is stale",
                      candidate, None)
    return None


def _common_refusal(candidate: Candidate, rows: Sequence[FenceRow],
                    watermarks: Sequence[Interval]) -> DponeError | None:
    if candidate.mutation_kind == "incremental_append" and candidate.generation[1] > 0:
        return _error("REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED",
                      "incremental_append does not accept a correction revision", candidate, None)
    stale = _stale_refusal(candidate, rows, watermarks)
    if stale is not None:
        return stale
    for row in rows:
        if row.operation_id == candidate.operation_id or not row.scope.overlaps(candidate.scope):
            continue
        if (candidate.mutation_kind == "incremental_append"
                and row.mutation_kind == "incremental_append" and row.scope == candidate.scope
                and row.remote_effect == "FULLY_APPLIED"
                and row.parent_id != candidate.parent_id):  # parts of one split day share it
            return _error("REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED",
                          "this exact append scope is already fully applied", candidate,
                          row.operation_id)
    return None


def admission_refusal(candidate: Candidate, rows: Sequence[FenceRow],
                      watermarks: Sequence[Interval]) -> DponeError | None:
    """Why ``candidate`` may not be admitted, or None.

    Besides the stale-generation and applied-append rules, a partition_replace of the same
    generation over an overlapping scope under another delivery key is an intent conflict: a
    replacement of an admitted scope needs a new explicit generation.
    """
    refusal = _common_refusal(candidate, rows, watermarks)
    if refusal is not None:
        return refusal
    for row in rows:
        if (candidate.mutation_kind == "partition_replace" and row.parent_id != candidate.parent_id
                and row.generation == candidate.generation
                and row.delivery_key != candidate.delivery_key
                and row.scope.overlaps(candidate.scope)):
            return _error("REST_DELIVERY_INTENT_CONFLICT",
                          "an overlapping scope is already admitted under the same generation; "
                          "a replacement needs a new explicit generation", candidate,
                          row.operation_id)
    return None


def submit_refusal(candidate: Candidate, rows: Sequence[FenceRow],
                   watermarks: Sequence[Interval]) -> DponeError | None:
    """Why ``candidate`` may not enter SUBMITTING now, or None (rechecked under the domain lock)."""
    refusal = _common_refusal(candidate, rows, watermarks)
    if refusal is not None:
        return refusal
    for row in rows:
        if (row.operation_id != candidate.operation_id and row.scope.overlaps(candidate.scope)
                and row.generation < candidate.generation and row.in_flight):
            return _error("REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT",
                          f"a lower overlapping generation {_render(row.generation)} "
                          f"({row.operation_id}) is {row.execution_state}/{row.remote_effect}; "
                          "wait for its reconciliation", candidate, row.operation_id)
    return None


def merge_watermark(existing: Sequence[Interval], new: Interval) -> list[Interval]:
    """The normalized map over ``existing`` (overlapping or adjacent entries) plus ``new``.

    Every point keeps the highest generation that covers it; neighbouring pieces with the same
    generation merge, so the result never overlaps and never holds two touching equal entries.
    """
    pieces = [*existing, new]
    points = sorted({p for piece in pieces for p in (piece.scope.lo, piece.scope.hi)})
    merged: list[Interval] = []
    for lo, hi in itertools.pairwise(points):
        covering = [p.generation for p in pieces if p.scope.lo <= lo and hi <= p.scope.hi]
        if not covering:
            continue
        generation = max(covering)
        last = merged[-1] if merged else None
        if last is not None and last.scope.hi == lo and last.generation == generation:
            merged[-1] = Interval(Scope(last.scope.lo, hi), generation)
        else:
            merged.append(Interval(Scope(lo, hi), generation))
    return merged
