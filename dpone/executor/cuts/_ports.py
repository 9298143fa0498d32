"""Cut points around every journal write of a delivery run and the MAY_ATTEMPT marker write.

:class:`CuttingJournal` is the :class:`SupervisorJournal` a run drives (the journal methods the
supervisor uses, nothing more): it passes every call to the journal it wraps, and brackets each
write (the methods :data:`JOURNAL_WRITE_POINTS` names: the write and critical transactions
of that port) with ``before:<point>`` / ``after:<point>``. A
transition's point is qualified by the kind of its trigger in the design contract
(``transition.submit_response``, ``transition.observation``, ``transition.verification``...), so
a receipt, an observation and a verification are cut apart. :class:`CuttingArtifacts` brackets
the marker of every attempt the journal planned (``marker``) and the other artifacts the run
publishes (``evidence``). Reads pass through untouched.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from dpone.contracts.design import load_state_contract
from dpone.contracts.journal import (
    AdmissionResult,
    AttemptPlan,
    ChildOperation,
    Lease,
    LeaseClaim,
    LeaseKindName,
    ParentAdmission,
    ParentOperation,
    SubmitLease,
    SupervisorJournal,
    TransitionRequest,
)
from dpone.contracts.ports import ArtifactRef, ImmutableArtifactPort
from dpone.contracts.rate import ActiveSlot, RateTurn, RateTurnRequest
from dpone.contracts.state import TriggerKind
from dpone.executor.cuts._hook import CutHook, When

_T = TypeVar("_T")

JOURNAL_WRITE_POINTS: Final[Mapping[str, str]] = {
    "admit_parent": "admission",
    "acquire_lease": "lease_acquire",
    "release_lease": "lease_release",
    "renew_lease": "lease_renew",
    "begin_attempt": "attempt_begin",
    "plan_attempt": "attempt_plan",
    "enter_submitting": "submitting",
    "transition": "transition",
    "settle_response": "transition",
    "record_orphan_marker": "orphan_marker",
    "promote_frontier": "frontier",
    "take_rate_turn": "rate_turn",
    "release_active_slot": "active_slot_release",
}
"""Every write of a delivery run's journal (:class:`SupervisorJournal`) -> the point that
brackets it (``transition`` is qualified by its trigger kind). ``begin_attempt`` is one
transaction that takes the mutation lease and plans the attempt: where ``lease_acquire`` and
``attempt_plan`` were two points, it is one (the lease row was the only thing written between
them). ``settle_response`` records a submit answer, the verification it proves and the mutation
lease's release in one transaction: it is cut as the answer's transition. A transition or
promotion under a ``LeaseClaim`` takes and releases its lease inside its own transaction: its
transition or frontier point brackets all of it."""
ARTIFACT_POINTS: Final = ("marker", "evidence")
TRANSPORT_POINTS: Final[tuple[tuple[When, str], ...]] = (
    ("before", "send"), ("after", "send"), ("after", "response"))
"""The send boundary (:mod:`dpone.executor.transport`): before the request, once its last body
byte was handed to the socket (requests with a body), and once the response was read, before
anyone records it."""


def journal_points() -> tuple[str, ...]:
    """The journal's cut points: one per write, a transition's one per trigger kind."""
    points: list[str] = []
    for point in dict.fromkeys(JOURNAL_WRITE_POINTS.values()):
        if point == "transition":
            points += [point, *(f"transition.{kind.value}" for kind in TriggerKind)]
        else:
            points.append(point)
    return tuple(points)


def cut_points() -> tuple[tuple[When, str], ...]:
    """Every cut point of the code: before and after each journal and artifact write, and the
    send boundary of the transport."""
    bracketed = (*journal_points(), *ARTIFACT_POINTS)
    return (*((when, point) for point in bracketed for when in ("before", "after")),
            *TRANSPORT_POINTS)


def transition_point(transition_id: str) -> str:
    """``transition.<trigger kind>`` of ``transition_id``; ``transition`` when it is unlisted
    (the journal refuses it)."""
    listed = load_state_contract().transitions.get(transition_id)
    return "transition" if listed is None else f"transition.{listed.trigger.kind.value}"


class CuttingJournal:
    """``journal`` as a delivery run sees it (:class:`SupervisorJournal`), with a cut before
    and after each of its writes."""

    def __init__(self, journal: SupervisorJournal, hook: CutHook) -> None:
        self._journal = journal
        self._hook = hook
        self.marker_keys: set[str] = set()

    def _around(self, point: str, write: Callable[[], _T]) -> _T:
        self._hook("before", point)
        result = write()
        self._hook("after", point)
        return result

    def _write(self, method: str, write: Callable[[], _T]) -> _T:
        return self._around(JOURNAL_WRITE_POINTS[method], write)

    # -- writes --------------------------------------------------------------------------------

    def admit_parent(self, request: ParentAdmission) -> AdmissionResult:
        return self._write("admit_parent", lambda: self._journal.admit_parent(request))

    def acquire_lease(self, operation_id: str, kind: LeaseKindName, holder: str,
                      ttl_seconds: int) -> Lease:
        return self._write("acquire_lease", lambda: self._journal.acquire_lease(
            operation_id, kind, holder, ttl_seconds))

    def release_lease(self, lease: Lease) -> None:
        self._write("release_lease", lambda: self._journal.release_lease(lease))

    def renew_lease(self, lease: Lease, ttl_seconds: int) -> Lease:
        return self._write("renew_lease", lambda: self._journal.renew_lease(lease, ttl_seconds))

    def begin_attempt(self, operation_id: str, holder: str, ttl_seconds: int, *,
                      rate: RateTurnRequest | None = None) -> SubmitLease:
        begun = self._write("begin_attempt", lambda: self._journal.begin_attempt(
            operation_id, holder, ttl_seconds, rate=rate))
        if begun.attempt is not None:
            self.marker_keys.add(begun.attempt.marker_key)
        return begun

    def plan_attempt(self, operation_id: str, lease: Lease, *,
                     takeover: bool = False) -> AttemptPlan:
        attempt = self._write("plan_attempt", lambda: self._journal.plan_attempt(
            operation_id, lease, takeover=takeover))
        self.marker_keys.add(attempt.marker_key)
        return attempt

    def enter_submitting(self, attempt: AttemptPlan, marker_digest: str, lease: Lease,
                         expected_revision: int, *, fenced_replay: bool = False
                         ) -> ChildOperation:
        return self._write("enter_submitting", lambda: self._journal.enter_submitting(
            attempt, marker_digest, lease, expected_revision, fenced_replay=fenced_replay))

    def transition(self, request: TransitionRequest,
                   lease: Lease | LeaseClaim) -> ChildOperation:
        return self._around(transition_point(request.transition_id),
                            lambda: self._journal.transition(request, lease))

    def settle_response(self, request: TransitionRequest, lease: Lease, *,
                        verification: TransitionRequest | None = None,
                        verification_lease: LeaseClaim | None = None
                        ) -> tuple[ChildOperation, ...]:
        return self._around(transition_point(request.transition_id),
                            lambda: self._journal.settle_response(
                                request, lease, verification=verification,
                                verification_lease=verification_lease))

    def record_orphan_marker(self, attempt: AttemptPlan, orphan_digest: str, lease: Lease,
                             expected_revision: int) -> ChildOperation:
        return self._write("record_orphan_marker", lambda: self._journal.record_orphan_marker(
            attempt, orphan_digest, lease, expected_revision))

    def promote_frontier(self, parent_id: str, lease: Lease | LeaseClaim) -> int:
        return self._write("promote_frontier",
                           lambda: self._journal.promote_frontier(parent_id, lease))

    def take_rate_turn(self, request: RateTurnRequest) -> RateTurn:
        return self._write("take_rate_turn", lambda: self._journal.take_rate_turn(request))

    def release_active_slot(self, slot: ActiveSlot) -> None:
        self._write("release_active_slot", lambda: self._journal.release_active_slot(slot))

    # -- reads ---------------------------------------------------------------------------------

    def load_parent(self, parent_id: str) -> ParentOperation:
        return self._journal.load_parent(parent_id)

    def get_child(self, operation_id: str) -> ChildOperation:
        return self._journal.get_child(operation_id)

    def now(self) -> dt.datetime:
        return self._journal.now()


class CuttingArtifacts:
    """``store`` with a cut before and after each write: ``marker`` for the MAY_ATTEMPT marker
    of an attempt ``journal`` planned, ``evidence`` for anything else the run publishes."""

    def __init__(self, store: ImmutableArtifactPort, journal: CuttingJournal,
                 hook: CutHook) -> None:
        self._store = store
        self._journal = journal
        self._hook = hook

    def _point(self, key: str) -> str:
        return "marker" if key in self._journal.marker_keys else "evidence"

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef:
        point = self._point(key)
        self._hook("before", point)
        ref = self._store.put_bytes(key, data)
        self._hook("after", point)
        return ref

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        point = self._point(key)
        self._hook("before", point)
        ref = self._store.put_stream(key, chunks)
        self._hook("after", point)
        return ref

    def get_bytes(self, key: str) -> bytes:
        return self._store.get_bytes(key)

    def open_stream(self, key: str, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        return self._store.open_stream(key, chunk_size)

    def stat(self, key: str) -> ArtifactRef | None:
        return self._store.stat(key)

    def local_file(self, key: str) -> Path | None:
        return self._store.local_file(key)


if TYPE_CHECKING:
    def _conforms(journal: CuttingJournal, store: CuttingArtifacts
                  ) -> tuple[SupervisorJournal, ImmutableArtifactPort]:
        """Port conformance, proved by mypy."""
        return journal, store
