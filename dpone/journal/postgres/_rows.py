"""Stored rows to contract models and fence rows."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from dpone.contracts.journal import ChildOperation, Generation, ParentOperation, Tenancy
from dpone.journal._core import axes_of, state_tuple
from dpone.journal._fence import FenceRow, GenerationKey, Interval, Scope


def tenancy(row: Mapping[str, Any]) -> Tenancy:
    return Tenancy(operation_namespace=row["operation_namespace"], tenant_id=row["tenant_id"],
                   environment_id=row["environment_id"])


def generation_key(row: Mapping[str, Any]) -> GenerationKey:
    return (row["generation_end"], int(row["correction_revision"]))


def _generation(row: Mapping[str, Any]) -> Generation:
    return Generation(scheduled_interval_end_utc=row["generation_end"],
                      correction_revision=int(row["correction_revision"]))


def _bounds(value: Any) -> tuple[dt.date, dt.date]:
    return value.lower, value.upper


def child_model(row: Mapping[str, Any]) -> ChildOperation:
    scope_from, scope_to = _bounds(row["scope"])
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
        scope_from=scope_from,
        scope_to=scope_to,
        payload_key=row["payload_key"],
        payload_digest=row["payload_digest"],
        state_name=row["state_name"],
        axes=axes_of(state_tuple(row)),
        revision=int(row["revision"]),
        journal_epoch=int(row["journal_epoch"]),
        attempt_ordinal=int(row["attempt_ordinal"]),
        observation_ordinal=int(row["observation_ordinal"]),
        receipt=row["receipt"],
        next_check_after=row["next_check_after"],
        last_error_code=row["last_error_code"],
    )


def parent_model(row: Mapping[str, Any], children: Sequence[Mapping[str, Any]]) -> ParentOperation:
    boundary_from, boundary_to = _bounds(row["boundary"])
    return ParentOperation(
        parent_id=row["parent_id"],
        tenancy=tenancy(row),
        logical_route_id=row["logical_route_id"],
        plan_digest=row["plan_digest"],
        parent_plan_digest=row["parent_plan_digest"],
        effect_conflict_domain=row["effect_conflict_domain"],
        mutation_kind=row["mutation_kind"],
        generation=_generation(row),
        boundary_from=boundary_from,
        boundary_to=boundary_to,
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
        scope=Scope(row["scope_from"], row["scope_to"]),
        execution_state=row["execution_state"],
        remote_effect=row["remote_effect"],
    )


def interval(row: Mapping[str, Any]) -> Interval:
    return Interval(scope=Scope(row["scope_from"], row["scope_to"]),
                    generation=generation_key(row))
