"""Stored rows (ISO text dates and timestamps, JSON text) to contract models and fence rows."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import ChildOperation, Generation, ParentOperation, Tenancy
from dpone.journal._core import axes_of, state_tuple
from dpone.journal._fence import FenceRow, GenerationKey, Interval, Scope

MOMENT_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
"""Timestamps written from Python: UTC, microseconds, ``Z`` (parsed like the clock's text)."""


def moment_text(moment: dt.datetime) -> str:
    if moment.tzinfo is None:
        raise DponeError(code="journal.illegal_transition",
                         message="journal timestamps must be timezone-aware")
    return moment.astimezone(dt.UTC).strftime(MOMENT_FORMAT)


def parse_moment(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone(dt.UTC)


def optional_moment(text: str | None) -> dt.datetime | None:
    return parse_moment(text) if text is not None else None


def parse_day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def optional_json(text: str | None) -> Any:
    return json.loads(text) if text is not None else None


def tenancy(row: Mapping[str, Any]) -> Tenancy:
    return Tenancy(operation_namespace=row["operation_namespace"], tenant_id=row["tenant_id"],
                   environment_id=row["environment_id"])


def generation_key(row: Mapping[str, Any]) -> GenerationKey:
    return (parse_moment(row["generation_end"]), int(row["correction_revision"]))


def _generation(row: Mapping[str, Any]) -> Generation:
    end, revision = generation_key(row)
    return Generation(scheduled_interval_end_utc=end, correction_revision=revision)


def scope(row: Mapping[str, Any]) -> Scope:
    return Scope(parse_day(row["scope_from"]), parse_day(row["scope_to"]))


def child_model(row: Mapping[str, Any]) -> ChildOperation:
    bounds = scope(row)
    return ChildOperation(
        operation_id=row["operation_id"],
        parent_id=row["parent_id"],
        ordinal=int(row["ordinal"]),
        tenancy=tenancy(row),
        delivery_key=row["delivery_key"],
        receiver_mutation_key=row["receiver_mutation_key"],
        mutation_intent_digest=row["mutation_intent_digest"],
        effect_conflict_domain=row["effect_conflict_domain"],
        generation=_generation(row),
        scope_from=bounds.lo,
        scope_to=bounds.hi,
        payload_key=row["payload_key"],
        payload_digest=row["payload_digest"],
        state_name=row["state_name"],
        axes=axes_of(state_tuple(row)),
        revision=int(row["revision"]),
        journal_epoch=int(row["journal_epoch"]),
        attempt_ordinal=int(row["attempt_ordinal"]),
        observation_ordinal=int(row["observation_ordinal"]),
        receipt=optional_json(row["receipt"]),
        next_check_after=optional_moment(row["next_check_after"]),
        last_error_code=row["last_error_code"],
    )


def parent_model(row: Mapping[str, Any], children: Sequence[Mapping[str, Any]]) -> ParentOperation:
    return ParentOperation(
        parent_id=row["parent_id"],
        tenancy=tenancy(row),
        logical_route_id=row["logical_route_id"],
        plan_digest=row["plan_digest"],
        parent_plan_digest=row["parent_plan_digest"],
        effect_conflict_domain=row["effect_conflict_domain"],
        mutation_kind=row["mutation_kind"],
        generation=_generation(row),
        boundary_from=parse_day(row["boundary_from"]),
        boundary_to=parse_day(row["boundary_to"]),
        checkpoint_frontier=int(row["checkpoint_frontier"]),
        children=tuple(child_model(child) for child in children),
    )


def fence_row(row: Mapping[str, Any]) -> FenceRow:
    return FenceRow(
        operation_id=row["operation_id"],
        parent_id=row["parent_id"],
        delivery_key=row["delivery_key"],
        mutation_intent_digest=row["mutation_intent_digest"],
        mutation_kind=row["mutation_kind"],
        generation=generation_key(row),
        scope=scope(row),
        execution_state=row["execution_state"],
        remote_effect=row["remote_effect"],
    )


def interval(row: Mapping[str, Any]) -> Interval:
    return Interval(scope=scope(row), generation=generation_key(row))


def attempt_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """An attempt row as the view returns it: timestamps as aware datetimes."""
    return {**row, "started_at": parse_moment(row["started_at"]),
            "outcome_at": optional_moment(row["outcome_at"])}


def observation_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """An observation row as the view returns it: the document parsed, the time a datetime."""
    return {**row, "document": json.loads(row["document"]),
            "observed_at": parse_moment(row["observed_at"])}
