"""Stored rows to contract models, fence rows and read views, shared by every dialect.

The row shapes are the same in every dialect; only how a stored value becomes a Python value
differs (a PostgreSQL driver returns dates, timestamps, ranges and parsed JSON; SQLite returns
ISO text and JSON text). A dialect subclasses ``RowCodec`` for that difference alone.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from dpone.contracts.journal import (
    ChildOperation,
    ChildStanding,
    DeliverySummary,
    Generation,
    ParentOperation,
    Tenancy,
)
from dpone.journal._core import axes_of, state_tuple
from dpone.journal._fence import FenceRow, GenerationKey, Interval, Scope


class RowCodec:
    """Stored values to Python values; the defaults are for drivers that already decode them."""

    def moment(self, value: Any) -> dt.datetime:
        moment: dt.datetime = value
        return moment

    def day(self, value: Any) -> dt.date:
        day: dt.date = value
        return day

    def document(self, value: Any) -> Any:
        """A JSON column's value."""
        return value

    def scope(self, row: Mapping[str, Any]) -> Scope:
        """A child row's half-open scope."""
        return Scope(self.day(row["scope_from"]), self.day(row["scope_to"]))

    def boundary(self, row: Mapping[str, Any]) -> Scope:
        """A parent row's half-open boundary."""
        return Scope(self.day(row["boundary_from"]), self.day(row["boundary_to"]))

    def optional_moment(self, value: Any) -> dt.datetime | None:
        return self.moment(value) if value is not None else None

    def optional_document(self, value: Any) -> Any:
        return self.document(value) if value is not None else None


def _columns(row: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """Columns stored as the model holds them (text), by name."""
    return {name: row[name] for name in names}


def tenancy(row: Mapping[str, Any]) -> Tenancy:
    return Tenancy(operation_namespace=row["operation_namespace"], tenant_id=row["tenant_id"],
                   environment_id=row["environment_id"])


def generation_key(codec: RowCodec, row: Mapping[str, Any]) -> GenerationKey:
    return (codec.moment(row["generation_end"]), int(row["correction_revision"]))


def _generation(codec: RowCodec, row: Mapping[str, Any]) -> Generation:
    end, revision = generation_key(codec, row)
    return Generation(scheduled_interval_end_utc=end, correction_revision=revision)


def child_model(codec: RowCodec, row: Mapping[str, Any]) -> ChildOperation:
    bounds = codec.scope(row)
    return ChildOperation(
        **_columns(row, "operation_id", "parent_id", "delivery_key", "receiver_mutation_key",
                   "mutation_intent_digest", "effect_conflict_domain", "payload_key",
                   "payload_digest", "payload_document_key", "state_name", "last_error_code"),
        ordinal=int(row["ordinal"]),
        tenancy=tenancy(row),
        generation=_generation(codec, row),
        scope_from=bounds.lo,
        scope_to=bounds.hi,
        axes=axes_of(state_tuple(row)),
        revision=int(row["revision"]),
        journal_epoch=int(row["journal_epoch"]),
        attempt_ordinal=int(row["attempt_ordinal"]),
        observation_ordinal=int(row["observation_ordinal"]),
        row_count=int(row["row_count"]),
        receipt=codec.optional_document(row["receipt"]),
        next_check_after=codec.optional_moment(row["next_check_after"]),
    )


def parent_model(codec: RowCodec, row: Mapping[str, Any],
                 children: Sequence[Mapping[str, Any]]) -> ParentOperation:
    boundary = codec.boundary(row)
    return ParentOperation(
        **_columns(row, "parent_id", "logical_route_id", "plan_digest", "parent_plan_digest",
                   "effect_conflict_domain", "mutation_kind"),
        tenancy=tenancy(row),
        generation=_generation(codec, row),
        boundary_from=boundary.lo,
        boundary_to=boundary.hi,
        checkpoint_frontier=int(row["checkpoint_frontier"]),
        children=tuple(child_model(codec, child) for child in children),
    )


def delivery_summaries(codec: RowCodec,
                       rows: Sequence[Mapping[str, Any]]) -> list[DeliverySummary]:
    """``list_deliveries`` rows (one per parent and child state, parents in order) as summaries."""
    standings: dict[str, list[ChildStanding]] = {}
    parents: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        parents.setdefault(row["parent_id"], row)
        standings.setdefault(row["parent_id"], []).append(ChildStanding(
            state_name=row["state_name"], axes=axes_of(state_tuple(row)),
            last_error_code=row["last_error_code"], without_rows=bool(row["without_rows"]),
            children=int(row["children"]),
            first_ordinal=int(row["first_ordinal"])))
    summaries = []
    for parent_id, row in parents.items():
        boundary = codec.boundary(row)
        summaries.append(DeliverySummary(
            parent_id=parent_id, logical_route_id=row["logical_route_id"],
            mutation_kind=row["mutation_kind"], boundary_from=boundary.lo,
            boundary_to=boundary.hi, admitted_at=codec.moment(row["admitted_at"]),
            checkpoint_frontier=int(row["checkpoint_frontier"]),
            children_total=int(row["child_count"]),
            standings=tuple(sorted(standings[parent_id], key=lambda s: s.first_ordinal))))
    return summaries


def fence_row(codec: RowCodec, row: Mapping[str, Any]) -> FenceRow:
    """An overlapping child as the fence sees it (the query returns ``scope_from``/``scope_to``)."""
    return FenceRow(
        operation_id=row["operation_id"],
        parent_id=row["parent_id"],
        delivery_key=row["delivery_key"],
        mutation_intent_digest=row["mutation_intent_digest"],
        mutation_kind=row["mutation_kind"],
        generation=generation_key(codec, row),
        scope=Scope(codec.day(row["scope_from"]), codec.day(row["scope_to"])),
        execution_state=row["execution_state"],
        remote_effect=row["remote_effect"],
    )


def interval(codec: RowCodec, row: Mapping[str, Any]) -> Interval:
    return Interval(scope=Scope(codec.day(row["scope_from"]), codec.day(row["scope_to"])),
                    generation=generation_key(codec, row))


def attempt_view(codec: RowCodec, row: Mapping[str, Any]) -> dict[str, Any]:
    """An attempt row as the view returns it: timestamps as aware datetimes."""
    return {**row, "started_at": codec.moment(row["started_at"]),
            "outcome_at": codec.optional_moment(row["outcome_at"])}


def observation_view(codec: RowCodec, row: Mapping[str, Any]) -> dict[str, Any]:
    """An observation row as the view returns it: the document parsed, the time a datetime."""
    return {**row, "document": codec.document(row["document"]),
            "observed_at": codec.moment(row["observed_at"])}
