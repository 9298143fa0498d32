"""The pure journal core shared by every journal adapter (no driver imports, no I/O).

Deterministic operation and attempt identities, the MAY_ATTEMPT marker document, the guard call
wrapper that turns a refused transition into a catalog ``DponeError``, and the helpers every
adapter needs to turn a stored row into a state tuple. The admission and pre-submit fence rules
live in ``_fence``; both modules are pure so the PostgreSQL and SQLite adapters share them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping
from typing import Any

from dpone.contracts._axes import (
    AcknowledgementState,
    CheckpointState,
    ExecutionState,
    RemoteEffect,
    VerificationState,
)
from dpone.contracts._base import canonical_json, content_digest
from dpone.contracts._errors import DponeError
from dpone.contracts.identity import DigestValue, identity
from dpone.contracts.journal import Axes, Lease, LeaseKindName
from dpone.contracts.state import (
    Evidence,
    LeaseKind,
    RevisionConflict,
    StateContract,
    StateTuple,
    TransitionDecision,
    TransitionGuard,
    TransitionRefused,
    TriggerKind,
)

MARKER_SCHEMA_ID = "dpone.may_attempt_marker.v1"
PARENT_ID_PREFIX = "op_v1_"
SUBMIT_TRANSITIONS = {"sealed": "sealed_submit", "retry_wait": "retry_wait_due"}
"""The transitions ``enter_submitting`` takes for a first attempt or a due retry, by source."""
REPLAY_TRANSITIONS = {"submitting": "submitting_fenced_replay",
                      "submitting_fenced_replay": "replay_again"}
"""The same-key fenced replays ``enter_submitting(fenced_replay=True)`` takes, by source."""

MAX_OBSERVATIONS_PER_OPERATION = 64
"""Verbose observations kept per operation; older ones are pruned (the receipt stays)."""


def _hex(rendered: str) -> str:
    return rendered.removeprefix("sha256:")


def parent_operation_id(operation_namespace: str, parent_plan_digest: str) -> str:
    """``op_v1_`` + hex of H(operation_namespace, parent_plan_digest)."""
    digest = identity("journal.parent_operation", {
        "operation_namespace": DigestValue(operation_namespace),
        "parent_plan_digest": DigestValue(parent_plan_digest),
    })
    return PARENT_ID_PREFIX + _hex(digest)


def child_operation_id(parent_id: str, ordinal: int) -> str:
    """The child's id: the parent id and the zero-padded four-digit ordinal."""
    if not 1 <= ordinal <= 9999:
        raise DponeError(code="journal.illegal_transition",
                         message=f"child ordinal {ordinal} is outside 1..9999")
    return f"{parent_id}_{ordinal:04d}"


def attempt_id(operation_namespace: str, operation_id: str, attempt_ordinal: int) -> str:
    """H(operation_namespace, operation_id, attempt_ordinal): the deterministic attempt id."""
    return identity("journal.attempt", {
        "operation_namespace": DigestValue(operation_namespace),
        "operation_id": operation_id,
        "attempt_ordinal": attempt_ordinal,
    })


def marker_key(operation_namespace: str, operation_id: str, attempt_ordinal: int) -> str:
    """``markers/<namespace hex>/<operation_id>/<attempt_ordinal>.json``."""
    return f"markers/{_hex(operation_namespace)}/{operation_id}/{attempt_ordinal}.json"


def marker_document(
    *,
    operation_namespace: str,
    tenant_id: str,
    environment_id: str,
    parent_id: str,
    parent_plan_digest: str,
    operation_id: str,
    ordinal: int,
    delivery_key: str,
    receiver_mutation_key: str,
    mutation_intent_digest: str,
    generation_end: dt.datetime,
    correction_revision: int,
    attempt_ordinal: int,
    expected_revision: int,
    journal_epoch: int,
    created_at: dt.datetime,
) -> dict[str, Any]:
    """The immutable MAY_ATTEMPT marker; ``created_at`` comes from the database clock."""
    return {
        "schema": MARKER_SCHEMA_ID,
        "operation_namespace": operation_namespace,
        "tenant_id": tenant_id,
        "environment_id": environment_id,
        "parent_id": parent_id,
        "parent_plan_digest": parent_plan_digest,
        "operation_id": operation_id,
        "child_ordinal": ordinal,
        "delivery_key": delivery_key,
        "receiver_mutation_key": receiver_mutation_key,
        "mutation_intent_digest": mutation_intent_digest,
        "generation": {
            "scheduled_interval_end_utc": to_utc_text(generation_end),
            "correction_revision": correction_revision,
        },
        "attempt_ordinal": attempt_ordinal,
        "attempt_id": attempt_id(operation_namespace, operation_id, attempt_ordinal),
        "expected_journal_revision": expected_revision,
        "journal_epoch": journal_epoch,
        "created_at": to_utc_text(created_at),
    }


def marker_bytes(marker: Mapping[str, Any]) -> bytes:
    """The exact bytes a caller publishes for a marker (canonical JSON)."""
    return canonical_json(dict(marker))


def marker_digest(marker: Mapping[str, Any]) -> str:
    return content_digest(marker_bytes(marker))


def to_utc_text(moment: dt.datetime) -> str:
    if moment.tzinfo is None:
        raise DponeError(code="journal.illegal_transition",
                         message="journal timestamps must be timezone-aware")
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def state_tuple(row: Mapping[str, Any]) -> StateTuple:
    """The five-axis tuple stored in a child row."""
    return StateTuple(
        execution_state=ExecutionState(row["execution_state"]),
        remote_effect=RemoteEffect(row["remote_effect"]),
        acknowledgement_state=AcknowledgementState(row["acknowledgement_state"]),
        verification_state=VerificationState(row["verification_state"]),
        checkpoint_state=CheckpointState(row["checkpoint_state"]),
    )


def axes_of(state: StateTuple) -> Axes:
    return Axes(
        execution_state=state.execution_state,
        remote_effect=state.remote_effect,
        acknowledgement_state=state.acknowledgement_state,
        verification_state=state.verification_state,
        checkpoint_state=state.checkpoint_state,
    )


def axis_values(state: StateTuple) -> dict[str, str]:
    """The axes as plain strings, keyed by column name."""
    return {name: state.axis(name) for name in (
        "execution_state", "remote_effect", "acknowledgement_state", "verification_state",
        "checkpoint_state")}


def refusal_error(refusal: TransitionRefused, operation_id: str | None) -> DponeError:
    """Map a guard refusal onto the catalog: CAS refusals vs. illegal transitions."""
    code = ("journal.revision_conflict" if isinstance(refusal, RevisionConflict)
            else "journal.illegal_transition")
    return DponeError(code=code, message=str(refusal), operation_id=operation_id,
                      details={"reason": str(refusal.reason),
                               "transition_id": refusal.transition_id})


def guarded(
    contract: StateContract,
    row: Mapping[str, Any],
    transition_id: str,
    *,
    expected_revision: int,
    lease_kind: LeaseKindName,
    lease_epoch: int,
    current_epoch: int,
    facts: Collection[str] = (),
    reconciliation_id: str | None = None,
    evidence_digest: str | None = None,
    prior_reconciliation_ids: Collection[str] = (),
    prior_evidence_digests: Collection[str] = (),
) -> TransitionDecision:
    """Run the runtime guard for one stored child row; refusals become ``DponeError``.

    The trigger and its evidence name are the contract's for ``transition_id``; the caller
    proves only ``facts`` (and the reconciliation ids of an operator transition).
    """
    guard = TransitionGuard(contract)
    try:
        evidence = Evidence.listed(guard.listed(transition_id), facts,
                                   reconciliation_id=reconciliation_id,
                                   evidence_digest=evidence_digest)
        return guard.check(
            state_tuple(row), transition_id,
            expected_revision=expected_revision,
            actual_revision=int(row["revision"]),
            lease_kind=LeaseKind(lease_kind),
            journal_epoch=lease_epoch,
            current_epoch=current_epoch,
            evidence=evidence,
            prior_reconciliation_ids=prior_reconciliation_ids,
            prior_evidence_digests=prior_evidence_digests,
        )
    except TransitionRefused as refusal:
        raise refusal_error(refusal, str(row["operation_id"])) from None


def check_lease_identity(lease: Lease, operation_id: str, kinds: Collection[str]) -> None:
    """The lease must be for this operation and of an allowed kind."""
    if lease.operation_id != operation_id or lease.kind not in kinds:
        raise DponeError(code="journal.lease_lost", operation_id=operation_id,
                         message=f"a {'/'.join(sorted(kinds))} lease on {operation_id} is "
                         f"required, not a {lease.kind} lease on {lease.operation_id}")


def releases_capacity(target: StateTuple) -> bool:
    """RETRY_WAIT and FINALIZED tuples release the attempt's remote-job reservation.

    FINALIZED leaves no automatic delivery transition (an ELIGIBLE checkpoint only awaits
    promotion). A finalized UNKNOWN remote effect keeps its reservation: the receiver job may
    still run, so only reconciliation (or an audited operator transfer) frees it.
    """
    if target.execution_state is ExecutionState.RETRY_WAIT:
        return True
    return (target.execution_state is ExecutionState.FINALIZED
            and target.remote_effect is not RemoteEffect.UNKNOWN)


def records_watermark(target: StateTuple, mutation_kind: str) -> bool:
    """A fully applied replacement raises the domain's interval watermark."""
    return (mutation_kind == "partition_replace"
            and target.execution_state is ExecutionState.FINALIZED
            and target.remote_effect is RemoteEffect.FULLY_APPLIED)


def promote_transition(contract: StateContract, state_name: str) -> str | None:
    """The checkpoint transition that promotes a child in ``state_name``, if any."""
    for transition in contract.outgoing(state_name):
        if transition.trigger.kind is TriggerKind.CHECKPOINT:
            return transition.id
    return None
