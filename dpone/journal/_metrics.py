"""The metrics snapshot of an environment (:mod:`dpone.contracts.journal_metrics`), read in one
read-only transaction.

Six grouped reads (the ``metrics_*`` queries), the revocation list, the environment row, and
the children of the parents old enough to be pruned (whose retention standing is
``_retention``'s own decision, :func:`~dpone.journal._retention.standings`) are decoded here into
typed rows and folded by profile id. Every age is the journal clock (``tx.now()``, read in the
same transaction) minus a journal timestamp; nothing reads the worker clock and nothing is
written. The reads group in the database, so a scrape costs a few aggregate queries, not a row
per child (only the retention read returns rows: those of the deliveries ``dpone admin prune``
would consider).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Self

from dpone.contracts._axes import (
    AXES,
    CheckpointState,
    ExecutionState,
    StateTuple,
    VerificationState,
)
from dpone.contracts.journal_metrics import (
    AXIS_STATES,
    OBSERVING,
    WAITING_TO_SUBMIT,
    ActionCount,
    AxisCount,
    HeldCount,
    JournalMetricsSnapshot,
    ProfileMetrics,
    profile_label,
)
from dpone.contracts.metrics import recovery_action
from dpone.journal import _retention as retention
from dpone.journal._environment import stored_environment
from dpone.journal._rows import Row, RowCodec, state_tuple
from dpone.journal._unit import UnitOfWork


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class ChildGroup:
    """One ``metrics_children`` row: children of one state under one kind of parent."""

    profile_ref: str | None
    binding_ref: str | None
    identity_expired: bool
    domain: str
    max_remote_jobs: int
    state: StateTuple
    children: int
    oldest_update: dt.datetime

    @classmethod
    def decode(cls, codec: RowCodec, row: Row) -> Self:
        return cls(profile_ref=_text(row["profile_ref"]), binding_ref=_text(row["binding_ref"]),
                   identity_expired=bool(row["identity_expired"]),
                   domain=str(row["effect_conflict_domain"]),
                   max_remote_jobs=int(row["max_remote_jobs"]), state=state_tuple(row),
                   children=int(row["children"]), oldest_update=codec.moment(row["oldest_update"]))


@dataclass(frozen=True, slots=True)
class Oldest:
    """A ``metrics_unknown_effects`` or ``metrics_receipts`` row: how many children of one
    profile ref, and the oldest moment of theirs."""

    profile_ref: str | None
    children: int
    since: dt.datetime

    @classmethod
    def decode(cls, codec: RowCodec, row: Row) -> Self:
        return cls(profile_ref=_text(row["profile_ref"]), children=int(row["children"]),
                   since=codec.moment(row["oldest_since"]))


@dataclass(frozen=True, slots=True)
class HeldSlots:
    """A ``metrics_capacity`` row: remote-job slots held now in one domain; ``profile_ref`` and
    ``here`` say whether this environment's children of that profile hold them."""

    domain: str
    here: bool
    profile_ref: str | None
    held: int

    @classmethod
    def decode(cls, row: Row) -> Self:
        return cls(domain=str(row["effect_conflict_domain"]), here=bool(row["here"]),
                   profile_ref=_text(row["profile_ref"]), held=int(row["held"]))


@dataclass(frozen=True, slots=True)
class ParentGroup:
    """A ``metrics_parents`` row: the deliveries of one profile ref."""

    profile_ref: str | None
    newest_boundary_end: dt.date
    newest_admitted_at: dt.datetime

    @classmethod
    def decode(cls, codec: RowCodec, row: Row) -> Self:
        return cls(profile_ref=_text(row["profile_ref"]),
                   newest_boundary_end=codec.day(row["newest_boundary_end"]),
                   newest_admitted_at=codec.moment(row["newest_admitted_at"]))


def _age(now: dt.datetime, since: dt.datetime | None) -> float:
    """Seconds from ``since`` to ``now`` (journal clock), never negative; 0 without a moment."""
    return 0.0 if since is None else max(0.0, (now - since).total_seconds())


def _oldest(rows: Iterable[Oldest]) -> Oldest | None:
    return min(rows, key=lambda row: row.since, default=None)


@dataclass
class _Profile:
    """What one profile id accumulates while the rows are folded."""

    groups: list[ChildGroup]
    unknown: list[Oldest]
    receipts: list[Oldest]
    parents: list[ParentGroup]
    held_here: dict[str, int]
    backlog: int = 0


def _by_profile(groups: Sequence[ChildGroup], unknown: Sequence[Oldest],
                receipts: Sequence[Oldest], parents: Sequence[ParentGroup],
                slots: Sequence[HeldSlots]) -> dict[str, _Profile]:
    profiles: dict[str, _Profile] = defaultdict(lambda: _Profile([], [], [], [], {}))
    for group in groups:
        profiles[profile_label(group.profile_ref)].groups.append(group)
    for row in unknown:
        profiles[profile_label(row.profile_ref)].unknown.append(row)
    for row in receipts:
        profiles[profile_label(row.profile_ref)].receipts.append(row)
    for parent in parents:
        profiles[profile_label(parent.profile_ref)].parents.append(parent)
    for slot in slots:
        if slot.here:
            held = profiles[profile_label(slot.profile_ref)].held_here
            held[slot.domain] = held.get(slot.domain, 0) + slot.held
    return profiles


def _axis_counts(groups: Sequence[ChildGroup]) -> tuple[AxisCount, ...]:
    counted: Counter[tuple[str, str]] = Counter()
    for group in groups:
        for axis in AXES:
            counted[axis, group.state.axis(axis)] += group.children
    return tuple(AxisCount(axis=axis, state=state, children=counted[axis, state])
                 for axis, states in AXIS_STATES.items() for state in states
                 if counted[axis, state])


def _capacity(profile: _Profile, held_by_domain: dict[str, int]) -> tuple[int, int]:
    """(slots, full domains) of the profile's effect-conflict domains with admitted work: a
    child not finalized, or a slot one of its children holds."""
    slots: dict[str, int] = {}
    working: set[str] = {domain for domain, held in profile.held_here.items() if held}
    for group in profile.groups:
        slots[group.domain] = max(slots.get(group.domain, 0), group.max_remote_jobs)
        if group.state.execution_state != ExecutionState.FINALIZED:
            working.add(group.domain)
    working &= set(slots)
    return (sum(slots[domain] for domain in working),
            sum(1 for domain in working if held_by_domain.get(domain, 0) >= slots[domain]))


def _held(groups: Sequence[ChildGroup], revoked: set[tuple[str, str]]) -> tuple[HeldCount, ...]:
    reasons: Counter[str] = Counter()
    for group in groups:
        if group.state.execution_state not in WAITING_TO_SUBMIT:
            continue
        if group.profile_ref is not None and ("profile", group.profile_ref) in revoked:
            reasons["profile_revoked"] += group.children
        if group.binding_ref is not None and ("binding", group.binding_ref) in revoked:
            reasons["binding_revoked"] += group.children
        if group.identity_expired:
            reasons["identity_expired"] += group.children
    return tuple(HeldCount(reason=reason, children=n) for reason, n in sorted(reasons.items()))


def _boundary_end(day: dt.date) -> dt.datetime:
    """UTC midnight of a boundary's exclusive end date: when its last day ended."""
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


def _profile(name: str, profile: _Profile, now: dt.datetime, held_by_domain: dict[str, int],
             revoked: set[tuple[str, str]]) -> ProfileMetrics:
    lagging = [group for group in profile.groups
               if group.state.verification_state == VerificationState.PASSED
               and group.state.checkpoint_state != CheckpointState.PROMOTED]
    oldest_lag = min((group.oldest_update for group in lagging), default=None)
    unknown, receipt = _oldest(profile.unknown), _oldest(profile.receipts)
    newest = max(profile.parents, key=lambda parent: parent.newest_admitted_at, default=None)
    capacity, full = _capacity(profile, held_by_domain)
    boundary_end = max((parent.newest_boundary_end for parent in profile.parents), default=None)
    return ProfileMetrics(
        profile=name, children=_axis_counts(profile.groups),
        unknown_effects=sum(row.children for row in profile.unknown),
        unknown_effect_oldest_age_s=_age(now, unknown.since if unknown else None),
        receipts_observed=sum(row.children for row in profile.receipts),
        receipt_oldest_age_s=_age(now, receipt.since if receipt else None),
        ttl_profile_ref=(receipt.profile_ref if receipt is not None
                         else newest.profile_ref if newest is not None else None),
        remote_jobs_active=sum(profile.held_here.values()),
        remote_jobs_capacity=capacity, remote_job_domains_full=full,
        checkpoint_lag_children=sum(group.children for group in lagging),
        checkpoint_lag_oldest_s=_age(now, oldest_lag),
        source_lag_s=_age(now, _boundary_end(boundary_end) if boundary_end else None),
        retention_backlog_parents=profile.backlog, held_children=_held(profile.groups, revoked))


def _actions(rows: Sequence[Row]) -> tuple[ActionCount, ...]:
    counted: Counter[str] = Counter()
    for row in rows:
        counted[recovery_action(str(row["transition_id"]))] += int(row["actions"])
    return tuple(ActionCount(action=action, actions=n) for action, n in sorted(counted.items()))


def _retention_backlog(tx: UnitOfWork) -> Counter[str]:
    """Eligible, unpruned parents by profile label, decided by ``_retention``'s own standing
    over the children of the parents old enough to be (``metrics_retention_children``)."""
    rows = tx.all("metrics_retention_children")
    standing = retention.standings(tx.codec, rows)
    labels = {str(row["parent_id"]): profile_label(_text(row["profile_ref"])) for row in rows}
    return Counter(labels[parent_id] for parent_id, verdict in standing.items()
                   if verdict == "eligible")


def snapshot(tx: UnitOfWork, environment_id: str) -> JournalMetricsSnapshot:
    """The environment's metrics snapshot (a read in one read-only transaction)."""
    tx.run("metrics_read_only")
    codec = tx.codec
    now = tx.now()
    groups = [ChildGroup.decode(codec, row) for row in tx.all("metrics_children")]
    unknown = [Oldest.decode(codec, row) for row in tx.all("metrics_unknown_effects")]
    observing = sorted(str(state) for state in OBSERVING)
    receipts = [Oldest.decode(codec, row)
                for row in tx.all("metrics_receipts", observing=observing)]
    slots = [HeldSlots.decode(row) for row in tx.all("metrics_capacity")]
    parents = [ParentGroup.decode(codec, row) for row in tx.all("metrics_parents")]
    revoked = {(str(row["kind"]), str(row["ref"])) for row in tx.all("revocations")}
    actions = _actions(tx.all("metrics_recovery_actions"))
    backlog = _retention_backlog(tx)
    environment = stored_environment(tx)
    held_by_domain: dict[str, int] = defaultdict(int)
    for slot in slots:
        held_by_domain[slot.domain] += slot.held
    profiles = _by_profile(groups, unknown, receipts, parents, slots)
    for name, parents_eligible in backlog.items():
        profiles[name].backlog = parents_eligible
    return JournalMetricsSnapshot(
        environment_id=environment_id, journal_now=now,
        journal_epoch=environment.journal_epoch if environment else 0,
        mutation_gate_blocked=environment is not None and environment.mutation_gate == "BLOCKED",
        revoked_profiles=sum(1 for kind, _ in revoked if kind == "profile"),
        revoked_bindings=sum(1 for kind, _ in revoked if kind == "binding"),
        recovery_actions=actions,
        profiles=tuple(_profile(name, profiles[name], now, held_by_domain, revoked)
                       for name in sorted(profiles)))
