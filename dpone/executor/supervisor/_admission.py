"""The journal admission of one sealed parent: the complete immutable child topology."""

from __future__ import annotations

import datetime as dt

from dpone.contracts.journal import ChildAdmission, Generation, ParentAdmission, Tenancy
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.supervisor._actions import fence_certified


def plan_tenancy(plan: RestDeliveryPlan) -> Tenancy:
    """Where the plan's deliveries are admitted: its namespace, tenant and environment."""
    environment = plan.environment.snapshot
    return Tenancy(operation_namespace=plan.environment.operation_namespace,
                   tenant_id=environment.tenant_id, environment_id=environment.environment_id)


def parent_admission(plan: RestDeliveryPlan, topology: SealedTopology) -> ParentAdmission:
    """The ``ParentAdmission`` of ``topology``; every value comes from the plan or the seal."""
    if not topology.children:
        raise ValueError("an empty topology is not admitted: the empty-input policy decides")
    if topology.profile_contract_digest != plan.profile.profile_contract_digest:
        raise ValueError("the topology was sealed under another operation profile")
    generations = {child.identities.generation for child in topology.children}
    if len(generations) != 1:
        raise ValueError("every child of one parent carries the same generation")
    sealed_generation = generations.pop()
    children = tuple(
        ChildAdmission(
            ordinal=child.descriptor.ordinal,
            delivery_key=child.identities.delivery_key,
            receiver_mutation_key=child.identities.receiver_mutation_key,
            mutation_intent_digest=child.identities.mutation_intent_digest,
            scope_from=child.descriptor.scope_from,
            scope_to=child.descriptor.scope_to,
            first_row=child.descriptor.first_row,
            row_count=child.descriptor.row_count,
            payload_key=child.payload.key,
            payload_digest=child.payload.digest,
            payload_document_key=child.document.key,
            wire_bytes=child.descriptor.wire_bytes,
        )
        for child in topology.children)
    return ParentAdmission(
        tenancy=plan_tenancy(plan),
        logical_route_id=plan.logical_route_id,
        plan_digest=topology.plan_digest,
        parent_plan_digest=topology.parent_plan_digest,
        frozen_parent_digest=topology.parent_digest,
        profile_contract_digest=topology.profile_contract_digest,
        effect_conflict_domain=plan.effect_conflict_domain,
        mutation_kind=plan.source_boundary.mutation_kind,
        generation=Generation(
            scheduled_interval_end_utc=sealed_generation.scheduled_interval_end_utc,
            correction_revision=sealed_generation.correction_revision),
        boundary_from=topology.coverage.boundary_from,
        boundary_to=topology.coverage.boundary_to,
        max_remote_jobs=plan.profile.snapshot.rate.max_active_remote_jobs,
        replay_fence_certified=fence_certified(plan),
        max_submit_attempts=plan.profile.snapshot.retry.submit.max_attempts,
        replay_retention_s=plan.fence.certified_retention_s if fence_certified(plan) else None,
        profile_ref=plan.profile.ref,
        binding_ref=plan.binding.ref,
        identity_valid_until=_utc(plan.binding.snapshot.remote_identity.valid_until),
        observation_days=plan.profile.snapshot.retention.observation_days,
        payload_days=plan.profile.snapshot.retention.payload_days,
        children=children,
    )


def _utc(moment: dt.datetime) -> dt.datetime:
    """A binding's timestamp as the journal stores it: one without an offset is UTC (the
    spec's canonical time zone)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)
