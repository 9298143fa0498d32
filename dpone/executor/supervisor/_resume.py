"""Resuming an admitted delivery from the journal alone: no workload, no source read, no seal.

Recovery never accepts an authoring manifest. The immutable plan the journal names (its
``plan_digest``) and each child's sealed ``dpone.rest_payload.v1`` document (its
``payload_document_key``) are the runtime authority. A document must hash to its
content-addressed key, name the journal's plan, and carry the journal's payload, delivery key,
receiver mutation key, mutation intent and generation; anything else is
``REST_DELIVERY_INTENT_CONFLICT`` before any request. The admitted parent is then driven exactly
as :func:`~dpone.executor.supervisor.deliver` drives it after admission: the same guarded
transitions, so nothing that may have reached the receiver is resent without the certified
fence and an UNKNOWN effect stays blocked.

:func:`observe_receipt` is one read-only poll of one child's durable receipt, what an
orchestrator's trigger does while a delivery is pending: GET only, once due, under an
observation lease, recorded by a revision CAS (two at once record one poll); it never submits,
verifies or promotes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

from pydantic import ValidationError

from dpone.contracts import DponeError, content_digest
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import ChildOperation, ParentOperation, SupervisorJournal
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ArtifactRef, Clock, ImmutableArtifactPort, RestTransportPort
from dpone.contracts.sealed import PAYLOAD_KEY_PREFIX, PayloadDocument, SealedChild
from dpone.executor.supervisor._actions import OBSERVING_STATES
from dpone.executor.supervisor._context import WaitObserver, open_run
from dpone.executor.supervisor._deliver import drive
from dpone.executor.supervisor._journal_writer import StepObserver
from dpone.executor.supervisor._observe import OBSERVATION_LIMIT, observe
from dpone.executor.supervisor._quiet import QuietPolls
from dpone.executor.supervisor._results import DeliveryBlocked, DeliveryResult
from dpone.observability.stages import stage


def _conflict(message: str, operation_id: str | None = None, **details: object) -> DponeError:
    return DponeError(code="REST_DELIVERY_INTENT_CONFLICT", message=message,
                      operation_id=operation_id, details=dict(details))


def check_plan(plan: RestDeliveryPlan, parent: ParentOperation) -> None:
    """Refuse a plan whose route, effect domain, mutation kind or tenancy is not the parent's."""
    environment = plan.environment.snapshot
    expected = {
        "logical_route_id": (plan.logical_route_id, parent.logical_route_id),
        "effect_conflict_domain": (plan.effect_conflict_domain, parent.effect_conflict_domain),
        "mutation_kind": (plan.source_boundary.mutation_kind, parent.mutation_kind),
        "operation_namespace": (plan.environment.operation_namespace,
                                parent.tenancy.operation_namespace),
        "tenant_id": (environment.tenant_id, parent.tenancy.tenant_id),
        "environment_id": (environment.environment_id, parent.tenancy.environment_id),
    }
    for name, (planned, admitted) in expected.items():
        if planned != admitted:
            raise _conflict(f"the plan's {name} is not the one delivery {parent.parent_id} was "
                            "admitted under", parent.parent_id, field=name)


def check_sealed(parent: ParentOperation, operation: ChildOperation, sealed: SealedChild) -> None:
    """Refuse a sealed child that is not the one the journal admitted as ``operation``."""
    identities = sealed.identities
    descriptor = sealed.descriptor
    generation = operation.generation
    expected: dict[str, tuple[object, object]] = {
        "ordinal": (descriptor.ordinal, operation.ordinal),
        "scope_from": (descriptor.scope_from, operation.scope_from),
        "scope_to": (descriptor.scope_to, operation.scope_to),
        "payload_document_key": (sealed.document.key, operation.payload_document_key),
        "payload_key": (sealed.payload.key, operation.payload_key),
        "payload_digest": (sealed.payload.digest, operation.payload_digest),
        "delivery_key": (identities.delivery_key, operation.delivery_key),
        "receiver_mutation_key": (identities.receiver_mutation_key,
                                  operation.receiver_mutation_key),
        "mutation_intent_digest": (identities.mutation_intent_digest,
                                   operation.mutation_intent_digest),
        "generation": ((identities.generation.scheduled_interval_end_utc,
                        identities.generation.correction_revision),
                       (generation.scheduled_interval_end_utc, generation.correction_revision)),
    }
    for name, (sealed_value, admitted) in expected.items():
        if sealed_value != admitted:
            raise _conflict(f"child {operation.ordinal} of delivery {parent.parent_id}: the sealed "
                            f"{name} differs from the journal's", operation.operation_id,
                            field=name, payload_document_key=operation.payload_document_key)


def read_sealed(parent: ParentOperation, operation: ChildOperation,
                 artifacts: ImmutableArtifactPort) -> SealedChild:
    key = operation.payload_document_key
    data = artifacts.get_bytes(key)
    digest = content_digest(data)
    if key != f"{PAYLOAD_KEY_PREFIX}{digest.removeprefix('sha256:')}.json":
        raise _conflict(f"child {operation.ordinal}: its sealed payload document does not hash to "
                        "its key", operation.operation_id, payload_document_key=key)
    try:
        document = PayloadDocument.model_validate_json(data)
    except ValidationError as error:
        raise DponeError(code="contract.schema_invalid", operation_id=operation.operation_id,
                         message=f"child {operation.ordinal}: {key} is not a "
                         f"dpone.rest_payload.v1 document: {error.error_count()} error(s)",
                         details={"payload_document_key": key}) from error
    if document.lineage.plan_digest != parent.plan_digest:
        raise _conflict(f"child {operation.ordinal}: its payload document was sealed under another "
                        "plan", operation.operation_id, field="plan_digest",
                        payload_document_key=key)
    sealed = SealedChild(descriptor=document.child, payload=document.payload,
                         document=ArtifactRef(key=key, digest=digest, size=len(data)),
                         identities=document.identities, request=document.request)
    check_sealed(parent, operation, sealed)
    return sealed


def check_payloads_retained(parent: ParentOperation) -> None:
    """Refuse a parent whose sealed payloads retention expired (`dpone admin prune`): nothing
    that needs the bytes runs, and the refusal says so instead of a missing artifact."""
    expired = parent.payloads_expired_at
    if expired is None:
        return
    raise DponeError(
        code="retention.payloads_expired", operation_id=parent.parent_id,
        message=f"the sealed payloads of delivery {parent.parent_id} expired at "
        f"{expired.isoformat(timespec='seconds')} (payload retention, `dpone admin prune`): "
        "every child was settled then; nothing is read or sent",
        hint="`dpone delivery inspect` shows the delivery's outcome and the prune in its audit "
             "trail; delivering the same data again is a new delivery (a correction revision "
             "of the workload).",
        details={"payloads_expired_at": expired.isoformat()})


def sealed_children(parent: ParentOperation,
                    artifacts: ImmutableArtifactPort) -> tuple[SealedChild, ...]:
    """Every sealed child of ``parent`` in ordinal order, read from its payload document and
    checked against the journal (``REST_DELIVERY_INTENT_CONFLICT`` on any difference);
    ``retention.payloads_expired`` when retention deleted them."""
    check_payloads_retained(parent)
    return tuple(read_sealed(parent, operation, artifacts)
                 for operation in sorted(parent.children, key=lambda child: child.ordinal))


def _by_ordinal(parent: ParentOperation,
                sealed_children: Iterable[SealedChild]) -> dict[int, SealedChild]:
    sealed = {child.descriptor.ordinal: child for child in sealed_children}
    admitted = {operation.ordinal: operation for operation in parent.children}
    if set(sealed) != set(admitted):
        raise _conflict(f"the sealed children {sorted(sealed)} are not the admitted children "
                        f"{sorted(admitted)} of delivery {parent.parent_id}", parent.parent_id)
    for ordinal, operation in admitted.items():
        check_sealed(parent, operation, sealed[ordinal])
    return sealed


def resume(plan: RestDeliveryPlan, parent_id: str, sealed_children: Sequence[SealedChild],
           journal: SupervisorJournal, artifacts: ImmutableArtifactPort,
           transport: RestTransportPort, *, holder: str, wait: bool = True,
           clock: Clock | None = None, sleep: Callable[[float], None] | None = None,
           rng: random.Random | None = None,
           observer: StepObserver | None = None,
           on_wait: WaitObserver | None = None,
           leases: LeasePolicy | None = None) -> DeliveryResult:
    """Drive the admitted delivery ``parent_id`` from its journal state, admitting nothing.

    ``plan`` is the plan the journal names and ``sealed_children`` every child's sealed form
    (see :func:`sealed_children`); both are checked against the journal before any request.
    """
    run = open_run(plan, journal, artifacts, transport, holder=holder, clock=clock, sleep=sleep,
                   rng=rng, observer=observer, on_wait=on_wait, leases=leases)
    with stage("resume", parent_id=parent_id, profile=run.telemetry.profile,
               environment=run.telemetry.environment):
        parent = run.writer.load_parent(parent_id)
        check_plan(plan, parent)
        return drive(run, parent, _by_ordinal(parent, sealed_children), wait=wait)


def observe_receipt(plan: RestDeliveryPlan, operation_id: str, journal: SupervisorJournal,
                    artifacts: ImmutableArtifactPort, transport: RestTransportPort, *,
                    holder: str, clock: Clock | None = None,
                    leases: LeasePolicy | None = None,
                    quiet: QuietPolls | None = None) -> ChildOperation:
    """Poll the receipt of child ``operation_id`` once when it is observing and due (``plan``
    and the sealed payload document checked against the journal first); return the child as
    the journal holds it afterwards. ``quiet``: the caller's unrecorded polls, kept from one
    call to the next (the next poll is due at ``quiet.next_due``)."""
    operation = journal.get_child(operation_id)
    if operation.state_name not in OBSERVING_STATES:
        return operation
    run = open_run(plan, journal, artifacts, transport, holder=holder, clock=clock,
                   leases=leases)
    parent = run.writer.load_parent(operation.parent_id)
    check_plan(plan, parent)
    sealed = read_sealed(parent, operation, artifacts)
    quiet = quiet if quiet is not None else QuietPolls()
    if run.due_in(quiet.next_due(operation.next_check_after)) > 0:
        return operation
    run.telemetry.admitted(parent.plan_digest)
    with run.telemetry.child("observe", operation):
        outcome = observe(run, operation, sealed, wait=False, once=True, quiet=quiet)
    if isinstance(outcome, DeliveryBlocked) and outcome.code == OBSERVATION_LIMIT:
        # Nothing is polled any more, yet the child stays observing: say so, or a trigger
        # would wait on it for ever.
        raise DponeError(code=outcome.code, operation_id=operation_id,
                         message=f"child {operation_id} was observed "
                         f"{outcome.evidence.get('observations')} times, the profile's "
                         "observability.max_observations: nothing more is polled",
                         details=dict(outcome.evidence))
    return journal.get_child(operation_id)
