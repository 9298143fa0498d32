"""Stored rows as typed, frozen values: decoded once, where a query's result enters the journal.

The row shapes are the same in every dialect; only how a stored value becomes a Python value
differs (psycopg returns dates, timestamps, ranges and parsed JSON; SQLite returns ISO text and
JSON text). A dialect subclasses ``RowCodec`` for that difference alone. Every ``decode`` takes
the driver's mapping and the codec, and nothing past it reads a column by name.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Self

from dpone.contracts._axes import (
    AcknowledgementState,
    CheckpointState,
    ExecutionState,
    RemoteEffect,
    VerificationState,
)
from dpone.contracts._errors import DponeError
from dpone.contracts.journal import MutationGateStatus
from dpone.contracts.state import StateTuple
from dpone.journal._fence import FenceRow, GenerationKey, Interval, Scope

Row = Mapping[str, Any]
"""One row as a dialect's driver returns it: only ``decode`` functions read it."""
MutationKind = Literal["partition_replace", "incremental_append"]


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

    def scope(self, row: Row) -> Scope:
        """A child row's half-open scope."""
        return Scope(self.day(row["scope_from"]), self.day(row["scope_to"]))

    def boundary(self, row: Row) -> Scope:
        """A parent row's half-open boundary."""
        return Scope(self.day(row["boundary_from"]), self.day(row["boundary_to"]))

    def optional_moment(self, value: Any) -> dt.datetime | None:
        return self.moment(value) if value is not None else None

    def optional_document(self, value: Any) -> Any:
        return self.document(value) if value is not None else None


def generation_key(codec: RowCodec, row: Row) -> GenerationKey:
    return (codec.moment(row["generation_end"]), int(row["correction_revision"]))


def mutation_kind(value: Any) -> MutationKind:
    """A parent's stored mutation kind (the table's CHECK constraint admits only these)."""
    if value == "partition_replace":
        return "partition_replace"
    if value == "incremental_append":
        return "incremental_append"
    raise DponeError(code="journal.unavailable",
                     message=f"the journal holds an unknown mutation kind {value!r}")


def state_tuple(row: Row) -> StateTuple:
    """The five-axis tuple stored in a child row."""
    return StateTuple(
        execution_state=ExecutionState(row["execution_state"]),
        remote_effect=RemoteEffect(row["remote_effect"]),
        acknowledgement_state=AcknowledgementState(row["acknowledgement_state"]),
        verification_state=VerificationState(row["verification_state"]),
        checkpoint_state=CheckpointState(row["checkpoint_state"]),
    )


@dataclass(frozen=True, slots=True)
class ChildRow:
    """One ``rest_delivery_child`` row."""

    operation_id: str
    parent_id: str
    ordinal: int
    operation_namespace: str
    tenant_id: str
    environment_id: str
    delivery_key: str
    receiver_mutation_key: str
    mutation_intent_digest: str
    effect_conflict_domain: str
    mutation_kind: str
    generation: GenerationKey
    scope: Scope
    row_count: int
    wire_bytes: int
    payload_key: str
    payload_digest: str
    payload_document_key: str
    state_name: str
    state: StateTuple
    revision: int
    journal_epoch: int
    attempt_ordinal: int
    observation_ordinal: int
    receipt: dict[str, Any] | None
    next_check_after: dt.datetime | None
    last_error_code: str | None
    updated_at: dt.datetime
    """When the journal committed ``revision`` (database clock): every child update bumps both."""

    @classmethod
    def decode(cls, codec: RowCodec, row: Row) -> Self:
        return cls(
            operation_id=str(row["operation_id"]), parent_id=str(row["parent_id"]),
            ordinal=int(row["ordinal"]), operation_namespace=str(row["operation_namespace"]),
            tenant_id=str(row["tenant_id"]), environment_id=str(row["environment_id"]),
            delivery_key=str(row["delivery_key"]),
            receiver_mutation_key=str(row["receiver_mutation_key"]),
            mutation_intent_digest=str(row["mutation_intent_digest"]),
            effect_conflict_domain=str(row["effect_conflict_domain"]),
            mutation_kind=str(row["mutation_kind"]), generation=generation_key(codec, row),
            scope=codec.scope(row), row_count=int(row["row_count"]),
            wire_bytes=int(row["wire_bytes"]),
            payload_key=str(row["payload_key"]), payload_digest=str(row["payload_digest"]),
            payload_document_key=str(row["payload_document_key"]),
            state_name=str(row["state_name"]), state=state_tuple(row),
            revision=int(row["revision"]), journal_epoch=int(row["journal_epoch"]),
            attempt_ordinal=int(row["attempt_ordinal"]),
            observation_ordinal=int(row["observation_ordinal"]),
            receipt=codec.optional_document(row["receipt"]),
            next_check_after=codec.optional_moment(row["next_check_after"]),
            last_error_code=row["last_error_code"], updated_at=codec.moment(row["updated_at"]))

    @property
    def submitting(self) -> bool:
        return self.state.execution_state is ExecutionState.SUBMITTING


@dataclass(frozen=True, slots=True)
class ParentRow:
    """One ``rest_delivery_parent`` row."""

    parent_id: str
    operation_namespace: str
    tenant_id: str
    environment_id: str
    logical_route_id: str
    plan_digest: str
    parent_plan_digest: str
    effect_conflict_domain: str
    mutation_kind: MutationKind
    generation: GenerationKey
    boundary: Scope
    max_remote_jobs: int
    checkpoint_frontier: int
    replay_fence_certified: bool
    max_submit_attempts: int
    replay_retention_s: int | None = None
    payloads_expired_at: dt.datetime | None = None

    @classmethod
    def decode(cls, codec: RowCodec, row: Row) -> Self:
        return cls(
            parent_id=str(row["parent_id"]), operation_namespace=str(row["operation_namespace"]),
            tenant_id=str(row["tenant_id"]), environment_id=str(row["environment_id"]),
            logical_route_id=str(row["logical_route_id"]), plan_digest=str(row["plan_digest"]),
            parent_plan_digest=str(row["parent_plan_digest"]),
            effect_conflict_domain=str(row["effect_conflict_domain"]),
            mutation_kind=mutation_kind(row["mutation_kind"]),
            generation=generation_key(codec, row), boundary=codec.boundary(row),
            max_remote_jobs=int(row["max_remote_jobs"]),
            checkpoint_frontier=int(row["checkpoint_frontier"]),
            replay_fence_certified=bool(row["replay_fence_certified"]),
            max_submit_attempts=int(row["max_submit_attempts"]),
            replay_retention_s=(None if row.get("replay_retention_s") is None
                                else int(row["replay_retention_s"])),
            payloads_expired_at=codec.optional_moment(row.get("payloads_expired_at")))


@dataclass(frozen=True, slots=True)
class EnvironmentRow:
    """The journal epoch and mutation gate of this journal's environment."""

    journal_epoch: int
    mutation_gate: str

    @classmethod
    def decode(cls, row: Row) -> Self:
        return cls(journal_epoch=int(row["journal_epoch"]), mutation_gate=str(row["mutation_gate"]))


def gate_status(codec: RowCodec, environment_id: str, row: Row) -> MutationGateStatus:
    """An ``environment_gate`` row as the view's gate status."""
    updated_at = row["updated_at"]
    return MutationGateStatus(
        environment_id=environment_id, mutation_gate=row["mutation_gate"],
        journal_epoch=int(row["journal_epoch"]), reason=row["gate_reason"],
        updated_by=row["updated_by"],
        updated_at=codec.moment(updated_at) if updated_at else None)


@dataclass(frozen=True, slots=True)
class LeaseRow:
    """A stored lease as ``check_lease`` reads it: ``live`` by the database clock."""

    holder: str
    token: int
    journal_epoch: int
    live: bool

    @classmethod
    def decode(cls, row: Row, prefix: str = "") -> Self:
        """The lease in ``row``, its columns named ``prefix``... (a joined read's)."""
        return cls(holder=str(row[f"{prefix}holder"]), token=int(row[f"{prefix}token"]),
                   journal_epoch=int(row[f"{prefix}journal_epoch"]),
                   live=bool(row[f"{prefix}live"]))


@dataclass(frozen=True, slots=True)
class AttemptRow:
    """One ``rest_delivery_attempt`` row, as far as the journal's rules read it."""

    attempt_id: str
    attempt_ordinal: int
    lease_holder: str
    lease_token: int
    outcome: str | None = None

    @classmethod
    def decode(cls, row: Row, prefix: str = "") -> Self:
        """The attempt in ``row``, its columns named ``prefix``... (a joined read's)."""
        outcome = row.get(f"{prefix}outcome")
        return cls(attempt_id=str(row[f"{prefix}attempt_id"]),
                   attempt_ordinal=int(row[f"{prefix}attempt_ordinal"]),
                   lease_holder=str(row[f"{prefix}lease_holder"]),
                   lease_token=int(row[f"{prefix}lease_token"]),
                   outcome=None if outcome is None else str(outcome))


@dataclass(frozen=True, slots=True)
class ReservationRow:
    """A capacity reservation with its attempt's ordinal and its child's current standing."""

    attempt_id: str
    operation_id: str
    released: bool
    attempt_ordinal: int | None
    current_attempt: int | None
    execution_state: str | None
    remote_effect: str | None

    @classmethod
    def decode(cls, row: Row) -> Self:
        def optional_int(value: Any) -> int | None:
            return int(value) if value is not None else None

        return cls(attempt_id=str(row["attempt_id"]), operation_id=str(row["operation_id"]),
                   released=row["released_at"] is not None,
                   attempt_ordinal=optional_int(row["attempt_ordinal"]),
                   current_attempt=optional_int(row["current_attempt"]),
                   execution_state=row["execution_state"], remote_effect=row["remote_effect"])


@dataclass(frozen=True, slots=True)
class SlotRow:
    """One held remote-job slot of an effect domain."""

    slot: int
    operation_id: str

    @classmethod
    def decode(cls, row: Row) -> Self:
        return cls(slot=int(row["slot"]), operation_id=str(row["operation_id"]))


@dataclass(frozen=True, slots=True)
class WatermarkRow:
    """One removed watermark entry and the operation that raised it."""

    interval: Interval
    operation_id: str

    @classmethod
    def decode(cls, codec: RowCodec, row: Row) -> Self:
        return cls(interval=interval(codec, row), operation_id=str(row["operation_id"]))


def fence_row(codec: RowCodec, row: Row) -> FenceRow:
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
        reconciled=bool(row["reconciled"]),
    )


def interval(codec: RowCodec, row: Row) -> Interval:
    return Interval(scope=Scope(codec.day(row["scope_from"]), codec.day(row["scope_to"])),
                    generation=generation_key(codec, row))
