"""``dpone check`` and ``dpone plan``: what a workload compiles to (``dpone.check_result.v1``,
``dpone.plan_result.v1``)."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from dpone.contracts._base import Digest, StrictModel
from dpone.contracts.documents._report import Report

CHECK_RESULT_SCHEMA_ID: Final = "dpone.check_result.v1"
PLAN_RESULT_SCHEMA_ID: Final = "dpone.plan_result.v1"


class ProfileSummary(Report):
    ref: str
    family: str
    request: str
    """``METHOD path``."""
    body: str
    """``type format`` and ``+compression`` when the body is compressed."""


class BindingSummary(Report):
    ref: str
    authority: str
    environment: str
    tier: str


class MutationSummary(Report):
    """The mutation and the planner's window rule (see docs/planner.md)."""

    kind: str
    scope_field: str
    window_days: int
    window_days_from: Literal["workload", "profile_default"]
    window_days_range: tuple[int, int]
    max_children: int


class FenceSummary(Report):
    type: str
    certified: bool


class DigestSummary(Report):
    plan: Digest
    operation_semantics: Digest
    execution_policy: Digest
    profile_contract: Digest
    receiver_binding_semantics: Digest
    operation_namespace: Digest
    effect_conflict_domain: Digest
    mapping: Digest
    """The payload mapping's digest (its id, layout and description): a column change shows
    here, not only in the plan digest."""
    mapping_layout: Digest
    """The digest of the mapping's column layout alone (columns and sort keys): one per mapping
    id (``mapping.layout_changed``)."""


class CompileSummary(Report):
    """What a workload compiles to: its files, profile, binding, mutation, fence and digests."""

    workload: str
    files: tuple[str, ...]
    profile: ProfileSummary
    binding: BindingSummary
    mutation: MutationSummary
    fence: FenceSummary
    digests: DigestSummary


class CheckResult(CompileSummary):
    """``dpone check --format json``: the workload compiles; nothing is written."""

    schema_id: Literal["dpone.check_result.v1"] = Field(default=CHECK_RESULT_SCHEMA_ID,
                                                        alias="schema")
    status: Literal["ok"] = "ok"


class PublishedPlan(StrictModel):
    """Where ``dpone plan --publish`` published the plan: the artifact store (as given, without
    a password) and its key there, ``plans/sha256/<hex>.json``: what ``dpone-executor run
    --plan-digest`` and recovery read."""

    artifacts: str
    key: str


class PlanResult(CompileSummary):
    """``dpone plan --format json``: the compiled plan, stored content-addressed at ``path``."""

    schema_id: Literal["dpone.plan_result.v1"] = Field(default=PLAN_RESULT_SCHEMA_ID,
                                                       alias="schema")
    status: Literal["ok"] = "ok"
    path: str
    written: bool
    """False when the same bytes were already stored under that digest."""
    plan_digest: Digest
    published: PublishedPlan | None = None
    """With ``--publish``: where the plan was published (create-if-absent) by its digest."""
