"""Admission of a parent and its complete child topology in one transaction.

The linearization of spec "Replacement generation and overlap fence": hold the effect domain
(``UnitOfWork.lock_domains``: the effect-domain row lock in PostgreSQL, the ``BEGIN IMMEDIATE``
write lock in SQLite), look up overlapping children and watermarks, refuse or insert while the
lock is held, and commit before any child may enter SUBMITTING. Children are admitted
``planned`` and sealed (``planned_seal``) in the same transaction.

Admission issues a constant number of statements whatever the child count: the children and
their audit rows are inserted in batches (``UnitOfWork.run_many``), and the seal is one guarded
decision shared by every child: each child is stored with its sealed target (revision 1) and
both audit rows ("admitted", then "planned_seal"), as if sealed by a CAS in the same transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import (
    AdmissionResult,
    ChildAdmission,
    ParentAdmission,
    ParentOperation,
)
from dpone.contracts.state import Fact, StateContract, StateTuple, Transition
from dpone.journal._cas import audit_params, axis_values, guarded
from dpone.journal._environment import environment
from dpone.journal._fence import Candidate, Scope, admission_refusal
from dpone.journal._governance import record_authority
from dpone.journal._ids import child_operation_id, parent_operation_id
from dpone.journal._lookup import children, fence_inputs, parent_operation, require_parent
from dpone.journal._retention import record as record_retention
from dpone.journal._unit import UnitOfWork

ADMISSION_ACTOR = "journal.admission"
SEALED_FACTS = (Fact.TOPOLOGY_ADMITTED, Fact.PAYLOAD_SEALED)
"""What admission proves for ``planned_seal``: the topology is admitted, its payloads sealed."""


def validate(request: ParentAdmission, environment_id: str) -> None:
    """Shape checks that need no database: scoping, ordinals, scopes, append corrections."""
    if request.tenancy.environment_id != environment_id:
        raise DponeError(code="journal.not_found",
                         message=f"environment {request.tenancy.environment_id!r} is outside "
                         f"this journal's scope ({environment_id!r})")
    ordinals = [child.ordinal for child in request.children]
    if not ordinals or ordinals != list(range(1, len(ordinals) + 1)):
        raise DponeError(code="journal.illegal_transition",
                         message="children must be ordered 1..n without gaps")
    for child in request.children:
        if not (request.boundary_from <= child.scope_from < child.scope_to
                <= request.boundary_to):
            raise DponeError(code="journal.illegal_transition",
                             message=f"child {child.ordinal} scope is empty or outside the "
                             "parent boundary")
    if (request.mutation_kind == "incremental_append"
            and request.generation.correction_revision > 0):
        raise DponeError(code="REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED",
                         message="incremental_append does not accept a correction revision")


def _resume_or_conflict(tx: UnitOfWork, request: ParentAdmission, parent_id: str) -> str | None:
    """The parent id to resume, None to admit anew; an intent conflict raises."""
    keys = [child.delivery_key for child in request.children]
    existing = {row.delivery_key: row for row in children(
        tx, "children_by_key", operation_namespace=request.tenancy.operation_namespace,
        keys=keys)}
    for child in request.children:
        row = existing.get(child.delivery_key)
        if row is not None and row.mutation_intent_digest != child.mutation_intent_digest:
            raise DponeError(code="REST_DELIVERY_INTENT_CONFLICT", operation_id=row.operation_id,
                             message=f"delivery key of child {child.ordinal} is admitted with "
                             "another mutation intent",
                             details={"delivery_key": child.delivery_key})
    if tx.one("get_parent", parent_id=parent_id) is not None:
        return parent_id
    if not existing:
        return None
    parents = {row.parent_id for row in existing.values()}
    if len(existing) == len(keys) and len(parents) == 1:
        resumed = parents.pop()
        stored = tx.all("children_of_parent", parent_id=resumed)
        if len(stored) == len(keys):
            return resumed
    raise DponeError(code="REST_DELIVERY_INTENT_CONFLICT",
                     message="some delivery keys are admitted under another parent topology",
                     details={"admitted_keys": sorted(existing)})


def _domain_params(request: ParentAdmission) -> dict[str, Any]:
    """The effect domain and generation, stored on the parent and on every child."""
    return {
        "effect_conflict_domain": request.effect_conflict_domain,
        "mutation_kind": request.mutation_kind,
        "generation_end": request.generation.scheduled_interval_end_utc,
        "correction_revision": request.generation.correction_revision,
    }


def _parent_params(request: ParentAdmission, parent_id: str) -> dict[str, Any]:
    tenancy = request.tenancy
    return {
        "parent_id": parent_id, "operation_namespace": tenancy.operation_namespace,
        "tenant_id": tenancy.tenant_id, "logical_route_id": request.logical_route_id,
        "plan_digest": request.plan_digest, "parent_plan_digest": request.parent_plan_digest,
        "frozen_parent_digest": request.frozen_parent_digest,
        "profile_contract_digest": request.profile_contract_digest,
        **_domain_params(request),
        "boundary_from": request.boundary_from, "boundary_to": request.boundary_to,
        "max_remote_jobs": request.max_remote_jobs, "child_count": len(request.children),
        "replay_fence_certified": request.replay_fence_certified,
        "max_submit_attempts": request.max_submit_attempts,
        "replay_retention_s": request.replay_retention_s,
    }


def _child_params(request: ParentAdmission, parent_id: str, child: ChildAdmission,
                  epoch: int, seal: _Seal) -> dict[str, Any]:
    tenancy = request.tenancy
    return {
        "operation_id": child_operation_id(parent_id, child.ordinal), "parent_id": parent_id,
        "ordinal": child.ordinal, "operation_namespace": tenancy.operation_namespace,
        "tenant_id": tenancy.tenant_id, "delivery_key": child.delivery_key,
        "receiver_mutation_key": child.receiver_mutation_key,
        "mutation_intent_digest": child.mutation_intent_digest,
        **_domain_params(request),
        "scope_from": child.scope_from, "scope_to": child.scope_to, "first_row": child.first_row,
        "row_count": child.row_count, "payload_key": child.payload_key,
        "payload_digest": child.payload_digest,
        "payload_document_key": child.payload_document_key, "wire_bytes": child.wire_bytes,
        "journal_epoch": epoch, **seal.columns,
    }


@dataclass(frozen=True, slots=True)
class _Planned:
    """A child as admission creates it: the contract's initial tuple at revision 0."""

    operation_id: str
    state: StateTuple
    revision: int = 0


@dataclass(frozen=True, slots=True)
class _Seal:
    """The ``planned_seal`` decision shared by every child of one admission.

    Every child starts ``planned`` at revision 0 in the admitting transaction, so the guard's
    verdict is the same for each: it is checked once, and each child is stored with its target
    (the columns the ``planned_seal`` CAS would have written, revision 1).
    """

    transition_id: str
    from_state: str
    to_state: str | None
    columns: dict[str, Any]


def _seal(contract: StateContract, first_operation_id: str, epoch: int) -> _Seal:
    planned = _Planned(operation_id=first_operation_id, state=contract.initial_tuple)
    decision = guarded(contract, planned, Transition.PLANNED_SEAL, expected_revision=0,
                       lease_kind="mutation", lease_epoch=epoch, current_epoch=epoch,
                       facts=SEALED_FACTS)
    target = contract.name_of(decision.target)
    return _Seal(transition_id=decision.transition_id, from_state=contract.initial,
                 to_state=target, columns={
                     "state_name": target, **axis_values(decision.target), "revision": 1,
                     "attempt_ordinal": 1 if "attempt_ordinal" in decision.advances else 0,
                     "observation_ordinal":
                         1 if "observation_ordinal" in decision.advances else 0})


def expire_observations(tx: UnitOfWork, request: ParentAdmission) -> int:
    """Apply the profile's observation retention: delete the observations older than
    ``observation_days`` (database clock) of FINALIZED children whose parent was admitted under
    this profile contract. Verbose observations are never replay authority (spec "Retention and
    compact effect authority"): the child's receipt, attempts, audit and effect stay."""
    if request.observation_days is None:
        return 0
    return tx.run("expire_observations", profile_contract_digest=request.profile_contract_digest,
                  days=request.observation_days)


def admit(tx: UnitOfWork, contract: StateContract, request: ParentAdmission) -> AdmissionResult:
    parent_id = parent_operation_id(request.tenancy.operation_namespace,
                                    request.parent_plan_digest)
    epoch = environment(tx).journal_epoch
    tx.lock_domains([request.effect_conflict_domain])
    expire_observations(tx, request)
    resumed = _resume_or_conflict(tx, request, parent_id)
    if resumed is not None:
        return AdmissionResult(parent=load(tx, resumed), resumed=True)
    rows, marks = fence_inputs(tx, request.effect_conflict_domain, request.boundary_from,
                               request.boundary_to)
    generation = (request.generation.scheduled_interval_end_utc,
                  request.generation.correction_revision)
    for child in request.children:
        refusal = admission_refusal(
            Candidate(parent_id=parent_id, delivery_key=child.delivery_key,
                      mutation_kind=request.mutation_kind, generation=generation,
                      scope=Scope(child.scope_from, child.scope_to)), rows, marks)
        if refusal is not None:
            raise refusal
    tx.run("insert_parent", **_parent_params(request, parent_id))
    record_authority(tx, request, parent_id)
    record_retention(tx, request, parent_id)
    seal = _seal(contract, child_operation_id(parent_id, request.children[0].ordinal), epoch)
    tx.run_many("insert_children", [_child_params(request, parent_id, child, epoch, seal)
                                     for child in request.children])
    audits: list[dict[str, Any]] = []
    tenancy = request.tenancy
    for child in request.children:
        operation_id = child_operation_id(parent_id, child.ordinal)
        audits.append(audit_params(
            operation_id=operation_id, actor=ADMISSION_ACTOR, transition_id="admitted",
            from_state=None, to_state=seal.from_state, revision=0,
            operation_namespace=tenancy.operation_namespace, tenant_id=tenancy.tenant_id,
            digests={"parent_plan_digest": request.parent_plan_digest,
                     "mutation_intent_digest": child.mutation_intent_digest,
                     "payload_digest": child.payload_digest}))
        audits.append(audit_params(
            operation_id=operation_id, actor=ADMISSION_ACTOR, transition_id=seal.transition_id,
            from_state=seal.from_state, to_state=seal.to_state, revision=1,
            operation_namespace=tenancy.operation_namespace, tenant_id=tenancy.tenant_id,
            digests={"mutation_intent_digest": child.mutation_intent_digest}))
    tx.run_many("insert_audits", audits)
    return AdmissionResult(parent=load(tx, parent_id), resumed=False)


def load(tx: UnitOfWork, parent_id: str) -> ParentOperation:
    return parent_operation(tx, require_parent(tx, parent_id))
