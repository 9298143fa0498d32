"""Typed rows to the contract models the journal port returns, and the read views."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpone.contracts.journal import (
    ChildOperation,
    ChildStanding,
    DeliverySummary,
    Generation,
    ParentOperation,
    Tenancy,
)
from dpone.journal._fence import GenerationKey
from dpone.journal._rows import ChildRow, ParentRow, Row, RowCodec, state_tuple


def _generation(key: GenerationKey) -> Generation:
    end, revision = key
    return Generation(scheduled_interval_end_utc=end, correction_revision=revision)


def _tenancy(row: ChildRow | ParentRow) -> Tenancy:
    return Tenancy(operation_namespace=row.operation_namespace, tenant_id=row.tenant_id,
                   environment_id=row.environment_id)


def child_model(row: ChildRow) -> ChildOperation:
    return ChildOperation(
        operation_id=row.operation_id, parent_id=row.parent_id, ordinal=row.ordinal,
        tenancy=_tenancy(row), delivery_key=row.delivery_key,
        receiver_mutation_key=row.receiver_mutation_key,
        mutation_intent_digest=row.mutation_intent_digest,
        effect_conflict_domain=row.effect_conflict_domain,
        generation=_generation(row.generation), scope_from=row.scope.lo, scope_to=row.scope.hi,
        payload_key=row.payload_key, payload_digest=row.payload_digest,
        payload_document_key=row.payload_document_key, state_name=row.state_name,
        axes=row.state, revision=row.revision, journal_epoch=row.journal_epoch,
        attempt_ordinal=row.attempt_ordinal, observation_ordinal=row.observation_ordinal,
        receipt=row.receipt, next_check_after=row.next_check_after,
        last_error_code=row.last_error_code, row_count=row.row_count,
        wire_bytes=row.wire_bytes,
    )


def parent_model(row: ParentRow, children: Sequence[ChildRow]) -> ParentOperation:
    return ParentOperation(
        parent_id=row.parent_id, tenancy=_tenancy(row), logical_route_id=row.logical_route_id,
        plan_digest=row.plan_digest, parent_plan_digest=row.parent_plan_digest,
        effect_conflict_domain=row.effect_conflict_domain,
        mutation_kind=row.mutation_kind,
        generation=_generation(row.generation), boundary_from=row.boundary.lo,
        boundary_to=row.boundary.hi, checkpoint_frontier=row.checkpoint_frontier,
        children=tuple(child_model(child) for child in children),
        payloads_expired_at=row.payloads_expired_at,
    )


def delivery_summaries(codec: RowCodec, rows: Sequence[Row]) -> list[DeliverySummary]:
    """``list_deliveries`` rows (one per parent and child state, parents in order) as summaries."""
    standings: dict[str, list[ChildStanding]] = {}
    parents: dict[str, Row] = {}
    for row in rows:
        parents.setdefault(row["parent_id"], row)
        standings.setdefault(row["parent_id"], []).append(ChildStanding(
            state_name=row["state_name"], axes=state_tuple(row),
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


def attempt_view(codec: RowCodec, row: Row) -> dict[str, Any]:
    """An attempt row as the view returns it: timestamps as aware datetimes."""
    return {**row, "started_at": codec.moment(row["started_at"]),
            "outcome_at": codec.optional_moment(row["outcome_at"])}


def observation_view(codec: RowCodec, row: Row) -> dict[str, Any]:
    """An observation row as the view returns it: the document parsed, the time a datetime."""
    return {**row, "document": codec.document(row["document"]),
            "observed_at": codec.moment(row["observed_at"])}
