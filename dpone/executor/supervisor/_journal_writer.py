"""The supervisor's one journal writer: every lease, attempt, transition, rate turn and promotion.

:class:`JournalWriter` is the only supervisor code that writes the journal, and it sees the
journal only as a :class:`~dpone.contracts.ports.SupervisorJournal` (the methods a run uses).
Each change is one guarded transaction (a revision CAS under a held lease, or under a
:meth:`~JournalWriter.claim` the transaction itself takes and releases), and every step that moves
a child tells the run's observer (a progress display) where it stands.

A held lease is renewed by a :class:`Heartbeat` every ``leases.heartbeat_s`` while its holder
lives: a process killed at any point stops renewing, so its children are free for recovery
within one short ``leases.ttl_s``. The journal decides expiry by its own clock and rechecks the
lease in every transaction that relies on it, so a failed renewal only shortens the time the
holder may still act.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import (
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
from dpone.contracts.rate import ActiveSlot, RateTurn, RateTurnRequest
from dpone.contracts.state import Fact, Transition
from dpone.executor.supervisor._telemetry import Telemetry

StepObserver = Callable[[ChildOperation, str], None]
"""Told every journal step; called from the thread of the child (several at once when a
synchronous batch has children in flight together)."""


class LeaseRenewal(Protocol):
    """Whatever renews a held lease: a journal, or the supervisor's journal writer."""

    def renew_lease(self, lease: Lease, ttl_seconds: int) -> Lease: ...


class Heartbeat:
    """Renews ``lease`` every ``policy.heartbeat_interval_s`` until :meth:`stop`."""

    def __init__(self, renewal: LeaseRenewal, lease: Lease, policy: LeasePolicy) -> None:
        self._renewal = renewal
        self._policy = policy
        self.lease = lease
        self.lost = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True,
                                        name=f"lease-heartbeat:{lease.kind}:{lease.operation_id}")

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop renewing (the caller releases the lease next)."""
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _beat(self) -> None:
        while not self._stopped.wait(self._policy.heartbeat_interval_s):
            try:
                self.lease = self._renewal.renew_lease(self.lease, self._policy.ttl_s)
            except DponeError as error:
                if error.code == "journal.lease_lost":
                    self.lost = True
                    return
                # The journal is unreachable for now: try again at the next beat; the lease
                # expires by the journal clock if it stays so, and every later step rechecks it.


def _request(operation: ChildOperation, transition: Transition, facts: Iterable[Fact],
             revision: int, **fields: object) -> TransitionRequest:
    return TransitionRequest.model_validate({
        "operation_id": operation.operation_id, "transition_id": transition.value,
        "expected_revision": revision, "facts": tuple(fact.value for fact in facts), **fields})


class JournalWriter:
    """The journal writes of one holder, with its lease policy, step observer and telemetry."""

    def __init__(self, journal: SupervisorJournal, holder: str, leases: LeasePolicy,
                 observer: StepObserver | None = None,
                 telemetry: Telemetry | None = None) -> None:
        self._journal = journal
        self.holder = holder
        self.leases = leases
        self._observer = observer
        self._telemetry = telemetry
        self._settled: set[tuple[str, str, int]] = set()
        """Leases a settling transaction released: their block releases nothing more."""
        self._settling = threading.Lock()

    def now(self) -> dt.datetime:
        """The journal's clock."""
        return self._journal.now()

    def load_parent(self, parent_id: str) -> ParentOperation:
        return self._journal.load_parent(parent_id)

    # --- admission and leases -----------------------------------------------------------------

    def admit(self, admission: ParentAdmission) -> ParentOperation:
        """Admit the complete parent (or find the admitted one)."""
        return self._journal.admit_parent(admission).parent

    def lease(self, operation_id: str,
              kind: LeaseKindName) -> contextlib.AbstractContextManager[Lease]:
        """Hold a journal lease of ``kind`` on ``operation_id`` for the block (:meth:`held`)."""
        return self.held(self._journal.acquire_lease(operation_id, kind, self.holder,
                                                     self.leases.ttl_s))

    @contextlib.contextmanager
    def held(self, lease: Lease) -> Iterator[Lease]:
        """Keep the acquired ``lease`` for the block, renewed by a heartbeat while the block runs
        (the environment's ``leases``); released after."""
        heartbeat = Heartbeat(self, lease, self.leases).start()
        try:
            yield lease
        finally:
            heartbeat.stop()
            key = (lease.operation_id, lease.kind, lease.token)
            with self._settling:
                settled = key in self._settled
                self._settled.discard(key)
            if not settled:  # else released by its settling transaction
                with contextlib.suppress(DponeError):
                    self._journal.release_lease(lease)

    def probe(self, operation_id: str, kind: LeaseKindName) -> None:
        """Take and release a ``kind`` lease on ``operation_id``: no other holder has one live
        (``journal.lease_held`` when one does)."""
        lease = self._journal.acquire_lease(operation_id, kind, self.holder, self.leases.ttl_s)
        with contextlib.suppress(DponeError):
            self._journal.release_lease(lease)

    def renew_lease(self, lease: Lease, ttl_seconds: int) -> Lease:
        """A heartbeat's renewal of a held lease."""
        return self._journal.renew_lease(lease, ttl_seconds)

    def claim(self, operation_id: str, kind: LeaseKindName) -> LeaseClaim:
        """A lease of ``kind`` on ``operation_id`` for one journal transaction only: for a step
        that holds it across no I/O (a verification, a promotion)."""
        return LeaseClaim(operation_id=operation_id, kind=kind, holder=self.holder,
                          ttl_seconds=self.leases.ttl_s)

    # --- guarded steps ------------------------------------------------------------------------

    def step(self, operation: ChildOperation, lease: Lease | LeaseClaim, transition: Transition,
             facts: Iterable[Fact], **fields: object) -> ChildOperation:
        """One guarded transition (named by its contract symbol, with the guard facts the caller
        proves) with a revision CAS on ``operation``'s current revision."""
        updated = self._journal.transition(
            _request(operation, transition, facts, operation.revision, **fields), lease)
        self.notify(updated, transition.value)
        return updated

    def settle(self, operation: ChildOperation, lease: Lease, answer: Transition,
               facts: Iterable[Fact], *, verified: tuple[Transition, Iterable[Fact]] | None = None,
               **fields: object) -> ChildOperation:
        """Record a submit answer under the held mutation ``lease`` and release the lease in the
        same transaction; with ``verified``, the verification that the answer proves on its own
        (its counters) is taken there too, under an observation lease claimed for it. The
        ``held`` block of ``lease`` then releases nothing more."""
        request = _request(operation, answer, facts, operation.revision, **fields)
        verification = claim = None
        if verified is not None:
            verification = _request(operation, *verified, operation.revision + 1)
            claim = self.claim(operation.operation_id, "observation")
        steps = self._journal.settle_response(request, lease, verification=verification,
                                              verification_lease=claim)
        with self._settling:
            self._settled.add((lease.operation_id, lease.kind, lease.token))
        for updated, taken in zip(steps, (request, verification), strict=False):
            if taken is not None:
                self.notify(updated, taken.transition_id)
        return steps[-1]

    def notify(self, operation: ChildOperation, transition_id: str) -> None:
        """Tell the observer (progress display) and the run's telemetry where ``operation`` now
        stands."""
        if self._telemetry is not None:
            self._telemetry.step(operation, transition_id)
        if self._observer is not None:
            self._observer(operation, transition_id)

    # --- the submit's critical transactions ---------------------------------------------------

    @contextlib.contextmanager
    def begun(self, operation_id: str, rate: RateTurnRequest) -> Iterator[SubmitLease]:
        """The mutation lease, the first attempt when due and that attempt's rate turn, taken
        in one transaction; the lease is held for the block (:meth:`held`)."""
        begun = self._journal.begin_attempt(operation_id, self.holder, self.leases.ttl_s,
                                            rate=rate)
        with self.held(begun.lease):
            yield begun

    def plan_attempt(self, operation_id: str, lease: Lease, *,
                     takeover: bool = False) -> AttemptPlan:
        return self._journal.plan_attempt(operation_id, lease, takeover=takeover)

    def enter_submitting(self, attempt: AttemptPlan, marker_digest: str, lease: Lease,
                         revision: int, *, replay: bool) -> ChildOperation:
        """The critical SUBMITTING transaction of a planned, marker-bound attempt."""
        operation = self._journal.enter_submitting(attempt, marker_digest, lease, revision,
                                                   fenced_replay=replay)
        self.notify(operation, "enter_submitting")
        return operation

    def record_orphan_marker(self, attempt: AttemptPlan, orphan_digest: str, lease: Lease,
                             revision: int) -> ChildOperation:
        updated = self._journal.record_orphan_marker(attempt, orphan_digest, lease, revision)
        self.notify(updated, "orphan_marker_found")
        return updated

    # --- rate turns and the frontier ----------------------------------------------------------

    def take_rate_turn(self, request: RateTurnRequest) -> RateTurn:
        return self._journal.take_rate_turn(request)

    def release_active_slot(self, slot: ActiveSlot) -> None:
        """Free a held active-request slot (one that cannot be freed ends with its lease)."""
        with contextlib.suppress(DponeError):
            self._journal.release_active_slot(slot)

    def promote(self, parent_id: str) -> int:
        """Extend the contiguous checkpoint frontier under a checkpoint lease claimed for the
        promotion's transaction; returns the frontier."""
        return self._journal.promote_frontier(parent_id, self.claim(parent_id, "checkpoint"))
