"""The compiled, immutable, content-addressed plan `dpone.rest_delivery_plan.v1`."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field, model_validator

from dpone.contracts._base import Digest, Name, StrictModel
from dpone.contracts.binding import ConnectionBinding, Environment, NetworkPolicy, TlsPolicy
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.profile import Limits, OperationProfile
from dpone.contracts.workload import Workload

PLAN_SCHEMA_ID: Final = "dpone.rest_delivery_plan.v1"
PLANNER_ALGORITHM_VERSION: Final = "dpone.adaptive_window_planner.v2"
# v1 (windows up to preferred_window_days.max) stays readable: admitted deliveries resume from
# their sealed topology and never re-plan; a new boundary is planned only by the current version.
PlannerAlgorithmVersion = Literal["dpone.adaptive_window_planner.v1",
                                  "dpone.adaptive_window_planner.v2"]


class ResolvedProfile(StrictModel):
    ref: str
    operation_semantics_digest: Digest
    execution_policy_digest: Digest
    profile_contract_digest: Digest
    snapshot: OperationProfile


class ResolvedBinding(StrictModel):
    """The binding and the platform policies its ``tls_policy_ref`` / ``network_policy_ref``
    name, as the environment defined them when the plan was compiled (a plan compiled before
    policies existed has none: its transport verifies TLS 1.2+ against the public roots and
    pins DNS answers without an address allowlist)."""

    ref: Name
    receiver_binding_semantics_digest: Digest
    snapshot: ConnectionBinding
    tls_policy: TlsPolicy | None = None
    network_policy: NetworkPolicy | None = None


class ResolvedEnvironment(StrictModel):
    ref: Name
    operation_namespace: Digest
    snapshot: Environment


class ResolvedSource(StrictModel):
    """The source as the runtime reads it: a file path is relative to the registry root."""

    type: Literal["file", "postgres"]
    format: Literal["csv", "parquet"] | None = None
    registry_path: str | None = None
    connection_ref: Name | None = None
    table: str | None = None
    query: str | None = None


class SourceBoundaryContract(StrictModel):
    scope_field: str
    scope_type: Literal["inclusive_date_window", "half_open_date_window"]
    canonical_range: Literal["half_open"] = "half_open"
    canonical_time_zone: Literal["UTC"] = "UTC"
    generation_from: Literal["scheduled_interval"]
    mutation_kind: Literal["partition_replace", "incremental_append"]
    correction_revision: Annotated[int, Field(ge=0)]
    receiver_atomic_scope: bool


class EffectiveLimits(Limits):
    """The profile's limits plus the window length chosen for this workload.

    ``window_days`` is the workload's ``preferred_window_days`` (or the profile's default),
    within the profile's ``min..max``: the planner's windows are at most this many days.
    """

    window_days: Annotated[int, Field(ge=1, le=366)]

    @model_validator(mode="after")
    def _window_within_profile_range(self) -> EffectiveLimits:
        allowed = self.preferred_window_days
        if not allowed.min <= self.window_days <= allowed.max:
            raise ValueError(f"window_days {self.window_days} is outside the profile's "
                             f"preferred_window_days range [{allowed.min}, {allowed.max}]")
        return self


class FenceDecision(StrictModel):
    type: Literal["none", "receiver_duplicate_key", "idempotency_key_header"]
    certified_in_environment: bool
    certified_retention_s: Annotated[int, Field(ge=0)] | None = None
    """How long after its first attempt a child's key is certified to be retained (the key
    retention case's tested delay): no same-key replay is made later than that. None: no
    certification bounds it (an environment without a certification policy)."""


class RestDeliveryPlan(StrictModel):
    schema_id: Literal["dpone.rest_delivery_plan.v1"] = Field(alias="schema")
    logical_route_id: Name
    workload: Workload
    environment: ResolvedEnvironment
    profile: ResolvedProfile
    binding: ResolvedBinding
    mapping: PayloadMapping
    mapping_digest: Digest
    source: ResolvedSource
    source_boundary: SourceBoundaryContract
    effect_conflict_domain: Digest
    effective_limits: EffectiveLimits
    fence: FenceDecision
    planner_algorithm_version: PlannerAlgorithmVersion
    required_capabilities: tuple[str, ...]
