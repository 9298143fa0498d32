"""The journal-derived metrics snapshot: what `dpone metrics serve` reads from the journal.

One :class:`JournalMetricsSnapshot` is one consistent read of an environment's journal (one
read-only transaction, every age by the journal's database clock): the numbers behind the
``journal`` entries of the metrics catalogue (:mod:`dpone.contracts.metrics`), grouped by the
configured names their labels carry (the environment and the operation profile id), never by an
operation, a digest or an operation namespace. The snapshot is environment-wide: it is a
platform operator's view across every namespace of the environment.

What each number means:

* ``children``: child operations by state axis and state (only non-zero counts are listed);
* ``unknown_effect_oldest_age_s``: time since the submit attempt whose effect is UNKNOWN
  started (the child's current attempt; its last journal update when it has none), of the
  oldest such child: the uncertainty is as old as the request that may have reached the
  receiver, however often a reconciliation was opened on it since;
* ``receipt_oldest_age_s``: time since the oldest receipt still observed (a child ACCEPTED or
  WAITING with a receipt id) was recorded, its current attempt's outcome time (the receipt age
  `dpone delivery inspect` shows);
* ``ttl_profile_ref``: the profile version (``id@version``) whose certified receipt TTL the
  oldest receipt's age is compared with: that receipt's delivery's, else the newest delivery's;
* ``remote_jobs_active``: the environment's children holding a remote-job slot;
  ``remote_jobs_capacity``: the slots (``max_remote_jobs``) of the effect-conflict domains with
  admitted work (a child not finalized, or a slot held by one); ``remote_job_domains_full``:
  those domains whose every slot is held (by any environment: a domain's slots are shared);
* ``checkpoint_lag_children`` / ``checkpoint_lag_oldest_s``: verified children whose checkpoint
  is not promoted yet, and how long the oldest has waited since it was verified;
* ``source_lag_s``: time since the end (UTC midnight of its exclusive end date) of the newest
  admitted source boundary; 0 while that end is still ahead;
* ``retention_backlog_parents``: deliveries whose payloads payload retention lets go (standing
  ``eligible``, :mod:`dpone.contracts.retention`) and that are not pruned yet;
* ``held_children``: children waiting to submit (:data:`WAITING_TO_SUBMIT`) whose delivery's
  profile or binding is revoked, or whose remote identity attestation has expired (a child may
  count under several reasons).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Final

from pydantic import AfterValidator, Field

from dpone.contracts._axes import (
    AXES,
    AcknowledgementState,
    CheckpointState,
    ExecutionState,
    RemoteEffect,
    VerificationState,
)
from dpone.contracts._base import Name, StrictModel
from dpone.contracts.metrics import (
    HOLD_REASONS,
    PROFILE,
    RECOVERY_ACTIONS,
    STATE_VALUES,
)

UNRECORDED_PROFILE: Final = "unrecorded"
"""The profile label of a delivery admitted before the journal recorded its profile ref (and
of a ref whose id is not a configured name)."""

AXIS_STATES: Final[dict[str, tuple[str, ...]]] = {
    axis: tuple(str(state) for state in enum)
    for axis, enum in zip(AXES, (ExecutionState, RemoteEffect, AcknowledgementState,
                                 VerificationState, CheckpointState), strict=True)}
"""Every state of each axis, in contract order."""

WAITING_TO_SUBMIT: Final = frozenset({ExecutionState.PLANNED, ExecutionState.SEALED,
                                      ExecutionState.RETRY_WAIT})
"""Unfinished children whose next step is a submit: what a revocation or an expired identity
holds back (children already submitted go on being observed and verified)."""

OBSERVING: Final = frozenset({ExecutionState.ACCEPTED, ExecutionState.WAITING})
"""Execution states in which a child's receipt is still observed (``poll_receipt``)."""

NonNegative = Annotated[int, Field(ge=0)]
Seconds = Annotated[float, Field(ge=0)]


def profile_label(profile_ref: str | None) -> str:
    """The ``profile`` label of a delivery's recorded profile ref (``id@version`` -> ``id``):
    :data:`UNRECORDED_PROFILE` without one, or when its id is not a configured name."""
    if profile_ref is None:
        return UNRECORDED_PROFILE
    profile_id = profile_ref.partition("@")[0]
    return profile_id if PROFILE.admits(profile_id) else UNRECORDED_PROFILE


def _one_of(allowed: tuple[str, ...], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"not a {what}: {value!r}")
        return value

    return AfterValidator(check)


Axis = Annotated[str, _one_of(AXES, "state axis")]
State = Annotated[str, _one_of(STATE_VALUES, "state")]
HoldReason = Annotated[str, _one_of(HOLD_REASONS, "hold reason")]
RecoveryAction = Annotated[str, _one_of(RECOVERY_ACTIONS, "recovery action")]


class AxisCount(StrictModel):
    """How many children stand in ``state`` on ``axis``."""

    axis: Axis
    state: State
    children: Annotated[int, Field(ge=1)]


class HeldCount(StrictModel):
    reason: HoldReason
    children: Annotated[int, Field(ge=1)]


class ActionCount(StrictModel):
    action: RecoveryAction
    actions: Annotated[int, Field(ge=1)]


class ProfileMetrics(StrictModel):
    """The numbers of one operation profile id's deliveries in the environment."""

    profile: Name
    """The ``profile`` label: the id of the deliveries' profile, or ``unrecorded``."""
    children: tuple[AxisCount, ...] = ()
    unknown_effects: NonNegative = 0
    unknown_effect_oldest_age_s: Seconds = 0.0
    receipts_observed: NonNegative = 0
    receipt_oldest_age_s: Seconds = 0.0
    ttl_profile_ref: str | None = None
    remote_jobs_active: NonNegative = 0
    remote_jobs_capacity: NonNegative = 0
    remote_job_domains_full: NonNegative = 0
    checkpoint_lag_children: NonNegative = 0
    checkpoint_lag_oldest_s: Seconds = 0.0
    source_lag_s: Seconds = 0.0
    retention_backlog_parents: NonNegative = 0
    held_children: tuple[HeldCount, ...] = ()

    def on_axis(self, axis: str, state: str) -> int:
        """How many children stand in ``state`` on ``axis`` (0 when none)."""
        return next((count.children for count in self.children
                     if (count.axis, count.state) == (axis, state)), 0)

    def held(self, reason: str) -> int:
        return next((count.children for count in self.held_children if count.reason == reason),
                    0)


class JournalMetricsSnapshot(StrictModel):
    """One consistent read of an environment's journal for its metrics (see the module)."""

    environment_id: Name
    journal_now: dt.datetime
    """The journal's database clock when it was read: every age is measured against it."""
    journal_epoch: NonNegative = 0
    mutation_gate_blocked: bool = False
    revoked_profiles: NonNegative = 0
    revoked_bindings: NonNegative = 0
    recovery_actions: tuple[ActionCount, ...] = ()
    """Audited operator recovery actions (``operator_<command>`` and ``capacity_repair`` audit
    rows) by catalogue action; only non-zero counts are listed."""
    profiles: tuple[ProfileMetrics, ...] = ()
    """One entry per profile id with a delivery in the environment, by id."""

    def actions(self, action: str) -> int:
        return next((count.actions for count in self.recovery_actions
                     if count.action == action), 0)
