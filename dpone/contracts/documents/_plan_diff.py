"""``dpone plan diff`` and ``dpone plan --all``: what changed between two compiled plans, by
consequence (``dpone.plan_diff.v1``), and a registry's golden plans (``dpone.plan_set.v1``)."""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

from pydantic import Field

from dpone.contracts._base import Digest
from dpone.contracts.documents._report import Interval, Report

PLAN_DIFF_SCHEMA_ID: Final = "dpone.plan_diff.v1"
PLAN_SET_SCHEMA_ID: Final = "dpone.plan_set.v1"

ConsequenceName = Literal["identity", "payload", "planning", "execution_policy", "descriptive"]
PlanStatus = Literal["unchanged", "changed", "added", "removed"]


class PlanSide(Report):
    """One side of a comparison: the plan's digest and where it was read from."""

    digest: Digest
    source: str
    """A plan file, a golden, ``sha256:<hex>`` in a plan store, a workload compiled now, or
    ``REF:path`` (a workload compiled from the registry at a git ref)."""


class ChangedField(Report):
    path: str
    """The dotted path of the changed field in the plan (``mapping.columns[5].name``)."""
    old: Any
    """The old value (``null``: the field did not exist)."""
    new: Any
    """The new value (``null``: the field no longer exists)."""


class ConsequenceGroup(Report):
    consequence: ConsequenceName
    meaning: str
    """What this class of change means for deliveries, operationally."""
    changes: tuple[ChangedField, ...]


class IdentityChange(Report):
    """One of the plan's derived digests that changed (e.g. ``mapping_digest``)."""

    name: str
    meaning: str
    old: str | None
    new: str | None


class ExposedDelivery(Report):
    """A delivery of the same workload in the journal that the change concerns."""

    parent_id: str
    boundary: Interval
    status: str
    """As `dpone delivery list` shows it: completed, pending, blocked, in_progress."""
    plan_digest: Digest
    under_old_plan: bool
    """Admitted under the old side's plan digest."""
    effect: Literal["conflicts_on_next_run", "applied_new_intent_on_rerun"]
    """An unfinished delivery conflicts with the new identity when its window runs again; an
    applied one is not resent, and running its window again under the new plan is a new
    delivery intent (a second effect at the receiver)."""


class JournalExposure(Report):
    journal: str
    environment_id: str
    deliveries: tuple[ExposedDelivery, ...]
    scanned: int
    """How many of the journal's newest deliveries were read (``--journal-limit``)."""


class ChildEstimate(Report):
    """Children the planner cuts the interval into under each plan (the source frozen now)."""

    interval: Interval
    rows: int
    before: int
    after: int


class PlanComparison(Report):
    """One workload's plans compared (``old`` or ``new`` is absent for an added or removed
    plan)."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"journal", "children"})

    name: str
    """The workload's name (its logical route id)."""
    environment: str
    status: PlanStatus
    old: PlanSide | None
    new: PlanSide | None
    consequences: tuple[ConsequenceGroup, ...]
    """Only the classes that have changes, most consequential first."""
    identities: tuple[IdentityChange, ...]
    new_intent: bool
    """A window run under the new plan is a new delivery intent: an unfinished window of the
    old plan conflicts, an applied one would be a second effect if run again."""
    journal: JournalExposure | None = None
    """With ``--journal``/``--environment-journal`` and a new delivery intent."""
    children: ChildEstimate | None = None
    """With ``--interval-start``/``--interval-end`` and a planning change."""

    @property
    def changed(self) -> bool:
        return self.status != "unchanged"


class PlanDiffDocument(Report):
    """``dpone plan diff --format json``; the exit code is 0 without a change, 1 with one."""

    schema_id: Literal["dpone.plan_diff.v1"] = Field(default=PLAN_DIFF_SCHEMA_ID, alias="schema")
    changed: bool
    plans: tuple[PlanComparison, ...]
    consequences: dict[str, int]
    """How many plans have a change of each class."""


class GoldenPlan(Report):
    """One workload's golden: where it is and how it compares with the compiled plan."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"diff"})

    name: str
    environment: str
    workload: str | None
    """The workload file (None for a golden whose workload no longer exists)."""
    path: str
    digest: Digest | None
    """The compiled plan's digest (None for a golden of a removed workload)."""
    state: Literal["written", "unchanged", "stale", "missing", "extra"]
    diff: PlanComparison | None = None
    """How a stale, missing or extra golden differs from the compiled plan (``--check``)."""


class PlanSet(Report):
    """``dpone plan --all --format json``: every workload of a registry compiled, its golden
    written (``--out``) or checked (``--check``)."""

    schema_id: Literal["dpone.plan_set.v1"] = Field(default=PLAN_SET_SCHEMA_ID, alias="schema")
    mode: Literal["write", "check"]
    directory: str
    plans: tuple[GoldenPlan, ...]
    stale: int
    """Goldens that differ from the compiled plans (``--check`` fails when not 0)."""
