"""What one supervised delivery shares: its ports, leases, guarded steps, clock and results.

Every journal change goes through :meth:`RunContext.step` (one guarded CAS transition under a
held lease, or under a :meth:`RunContext.claim` that the transition's own transaction takes and
releases); every stop goes through :meth:`RunContext.blocked`, which keeps only bounded
scalars as evidence and names the operator's allowed next actions.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from dpone.contracts import DponeError, RemoteEffect, StrictModel, canonical_json
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import (
    ChildOperation,
    DeliveryJournalPort,
    Lease,
    LeaseClaim,
    LeaseKindName,
    TransitionRequest,
)
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import Clock, ImmutableArtifactPort, RestTransportPort
from dpone.contracts.state import Fact, Transition
from dpone.contracts.transport import Failure, Response
from dpone.executor.clock import SleepingWith, SystemClock
from dpone.executor.supervisor._actions import ACTIONS
from dpone.executor.supervisor._gate import SendGate
from dpone.executor.supervisor._heartbeat import Heartbeat
from dpone.executor.supervisor._results import DeliveryBlocked

DUE_MARGIN_S: Final = 0.05
PROMOTION_STRIDE: Final = 8
"""A synchronous batch promotes its frontier once this many children past it are done: one
promotion transaction per stride of children instead of one per child."""
MAX_REASON_CHARS: Final = 160

StepObserver = Callable[[ChildOperation, str], None]
"""Told every journal step; called from the thread of the child (several at once when a
synchronous batch has children in flight together)."""


class RetryWait(StrictModel):
    """A failed submit or receipt poll that this run repeats after ``delay_s``.

    Told to the :data:`WaitObserver` before the run sleeps (a progress display, not journal
    state): ``attempt`` is the failed submit attempt or the count of consecutive failed polls,
    ``max_attempts`` the profile's bound for that loop, ``reason`` a bounded description of the
    failure (a transport failure class or an HTTP status, never a body or a header).
    """

    operation_id: str
    ordinal: int
    action: Literal["submit", "replay", "poll_receipt"]
    reason: str
    attempt: int
    max_attempts: int
    delay_s: float
    next_attempt_at: dt.datetime


WaitObserver = Callable[[RetryWait], None]


@dataclass
class RunContext:
    """The ports and policies of one delivery run (one holder, one plan)."""

    plan: RestDeliveryPlan
    journal: DeliveryJournalPort
    artifacts: ImmutableArtifactPort
    transport: RestTransportPort
    holder: str
    clock: Clock
    """The worker's clocks: the submit and observation budgets, reported wall times, sleeps."""
    rng: random.Random
    observer: StepObserver | None = None
    frontier: int = 0
    on_wait: WaitObserver | None = None
    leases: LeasePolicy = field(default_factory=LeasePolicy)
    """The environment's lease length and heartbeat: a lost run blocks for one TTL at most."""
    gate: SendGate = field(default_factory=SendGate)
    """Shut at the first stop: no new request of this run starts after it."""
    _done_to: int = field(default=0, repr=False)
    """The highest ordinal this run finished (:meth:`promote_verified`)."""
    _settled: set[tuple[str, str, int]] = field(default_factory=set, repr=False)
    """Leases a settling transaction released (:meth:`settle`): their block releases nothing."""

    @property
    def fence_certified(self) -> bool:
        """True when the plan's receiver fence is certified here: same-key replay is allowed."""
        return self.plan.fence.type != "none" and self.plan.fence.certified_in_environment

    # --- leases and guarded steps -------------------------------------------------------------

    def lease(self, operation_id: str, kind: LeaseKindName) -> contextlib.AbstractContextManager[Lease]:
        """Hold a journal lease of ``kind`` on ``operation_id`` for the block (:meth:`held`)."""
        return self.held(self.journal.acquire_lease(operation_id, kind, self.holder,
                                                    self.leases.ttl_s))

    @contextlib.contextmanager
    def held(self, lease: Lease) -> Iterator[Lease]:
        """Keep the acquired ``lease`` for the block, renewed by a heartbeat while the block runs
        (the environment's ``leases``); released after."""
        heartbeat = Heartbeat(self.journal, lease, self.leases).start()
        try:
            yield lease
        finally:
            heartbeat.stop()
            if _lease_key(lease) in self._settled:
                self._settled.discard(_lease_key(lease))  # released by its settling transaction
            else:
                with contextlib.suppress(DponeError):
                    self.journal.release_lease(lease)

    def claim(self, operation_id: str, kind: LeaseKindName) -> LeaseClaim:
        """A lease of ``kind`` on ``operation_id`` for one journal transaction only: for a step
        that holds it across no I/O (a verification, a promotion)."""
        return LeaseClaim(operation_id=operation_id, kind=kind, holder=self.holder,
                          ttl_seconds=self.leases.ttl_s)

    def step(self, operation: ChildOperation, lease: Lease | LeaseClaim, transition: Transition,
             facts: Iterable[Fact], **fields: object) -> ChildOperation:
        """One guarded transition with a revision CAS on ``operation``'s current revision.

        The caller names the transition by its contract symbol and the guard facts it proves;
        the journal takes the trigger and its evidence from the contract's entry for it.
        """
        request = TransitionRequest.model_validate({
            "operation_id": operation.operation_id, "transition_id": transition.value,
            "expected_revision": operation.revision,
            "facts": tuple(fact.value for fact in facts), **fields})
        updated = self.journal.transition(request, lease)
        self.notify(updated, transition.value)
        return updated

    def settle(self, operation: ChildOperation, lease: Lease, answer: Transition,
               facts: Iterable[Fact], *, verified: tuple[Transition, Iterable[Fact]] | None = None,
               **fields: object) -> ChildOperation:
        """Record a submit answer under the held mutation ``lease`` and release the lease in the
        same transaction; with ``verified``, the verification that the answer proves on its own
        (its counters) is taken there too, under an observation lease claimed for it. The
        ``held`` block of ``lease`` then releases nothing more."""
        request = TransitionRequest.model_validate({
            "operation_id": operation.operation_id, "transition_id": answer.value,
            "expected_revision": operation.revision,
            "facts": tuple(fact.value for fact in facts), **fields})
        verification = claim = None
        if verified is not None:
            verification = TransitionRequest(
                operation_id=operation.operation_id, transition_id=verified[0].value,
                expected_revision=operation.revision + 1,
                facts=tuple(fact.value for fact in verified[1]))
            claim = self.claim(operation.operation_id, "observation")
        steps = self.journal.settle_response(request, lease, verification=verification,
                                             verification_lease=claim)
        self._settled.add(_lease_key(lease))
        for updated, taken in zip(steps, (request, verification), strict=False):
            if taken is not None:
                self.notify(updated, taken.transition_id)
        return steps[-1]

    def notify(self, operation: ChildOperation, transition_id: str) -> None:
        """Tell the observer (progress display) where ``operation`` now stands."""
        if self.observer is not None:
            self.observer(operation, transition_id)

    def retrying(self, operation: ChildOperation, action: Literal["submit", "replay", "poll_receipt"],
                 outcome: Response | Failure | int, attempt: int, delay_s: float) -> None:
        """Tell the wait observer that ``operation``'s ``action`` failed (``outcome``: the
        response, the transport failure or an HTTP status) and is repeated in ``delay_s``."""
        if self.on_wait is None:
            return
        retry = self.plan.profile.snapshot.retry
        bound = retry.observation if action == "poll_receipt" else retry.submit
        self.on_wait(RetryWait(
            operation_id=operation.operation_id, ordinal=operation.ordinal, action=action,
            reason=failure_reason(outcome), attempt=attempt, max_attempts=bound.max_attempts,
            delay_s=round(delay_s, 3),
            next_attempt_at=self.clock.now() + dt.timedelta(seconds=delay_s)))

    def back_off(self, operation: ChildOperation,
                 action: Literal["submit", "replay", "poll_receipt"],
                 outcome: Response | Failure | int, attempt: int, delay_s: float) -> None:
        """:meth:`retrying`, then sleep ``delay_s``."""
        self.retrying(operation, action, outcome, attempt, delay_s)
        self.clock.sleep(delay_s)

    def promote_verified(self, parent_id: str, ordinal: int) -> None:
        """``ordinal`` is done: promote the frontier when it is due. An asynchronous job's child
        is promoted as soon as it is verified; a synchronous batch promotes once
        :data:`PROMOTION_STRIDE` children past the frontier are done, and :meth:`flush_frontier`
        promotes the rest when the run ends or stops (a lost run's verified children are
        promoted by the next run: the frontier only ever lags, it never runs ahead)."""
        self._done_to = max(self._done_to, ordinal)
        sync = self.plan.profile.snapshot.protocol_family == "sync_batch"
        if ordinal - self.frontier >= (PROMOTION_STRIDE if sync else 1):
            self.promote(parent_id)

    def flush_frontier(self, parent_id: str) -> int:
        """Promote what :meth:`promote_verified` left for later; returns the frontier."""
        if self._done_to > self.frontier:
            self.promote(parent_id)
        return self.frontier

    def promote(self, parent_id: str) -> int:
        """Extend the contiguous checkpoint frontier under a checkpoint lease held for the
        promotion's transaction."""
        self.frontier = self.journal.promote_frontier(parent_id,
                                                      self.claim(parent_id, "checkpoint"))
        return self.frontier

    def publish_evidence(self, operation: ChildOperation, name: str,
                         document: Mapping[str, object]) -> str:
        """Publish bounded evidence create-if-absent; returns its digest."""
        key = f"evidence/{operation.operation_id}/attempt-{operation.attempt_ordinal}/{name}.json"
        return self.artifacts.put_bytes(key, canonical_json(dict(document))).digest

    # --- the journal clock (due times); the worker's is ``clock`` ---------------------------------

    def now(self) -> dt.datetime:
        """The journal's (database) clock."""
        return self.journal.now()

    def due_in(self, due: dt.datetime | None) -> float:
        """Seconds until ``due`` by the journal clock (0 when due or unset)."""
        if due is None:
            return 0.0
        return max((due - self.now()).total_seconds(), 0.0)

    def wait_until(self, due: dt.datetime | None) -> None:
        """Sleep until ``due`` has passed by the journal clock."""
        self.pause(self.due_in(due))

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds`` (from :meth:`due_in`) plus a margin past the due time; 0 is no-op."""
        if seconds > 0:
            self.clock.sleep(seconds + DUE_MARGIN_S)

    # --- results ------------------------------------------------------------------------------

    def blocked(self, operation: ChildOperation, code: str, failure: Failure | None = None,
                extra: Mapping[str, str | int] | None = None) -> DeliveryBlocked:
        """The stop result for ``operation``: bounded scalars only, and the allowed actions.

        Shuts the send gate: no new request of this run starts after a stop."""
        self.gate.shut(operation.operation_id)
        evidence: dict[str, str | int] = {
            "state_name": operation.state_name, "revision": operation.revision,
            "attempt_ordinal": operation.attempt_ordinal, "ordinal": operation.ordinal,
            "delivery_key": operation.delivery_key}
        if failure is not None:
            evidence.update({"transport_phase": failure.phase.value,
                             "transport_failure": failure.kind.value})
        evidence.update(scalars(operation.receipt or {}))
        evidence.update(extra or {})
        return DeliveryBlocked(code=code, parent_id=operation.parent_id,
                               operation_id=operation.operation_id,
                               remote_effect=RemoteEffect(operation.axes.remote_effect),
                               evidence=evidence,
                               allowed_actions=ACTIONS.get(code, ("inspect_evidence",)),
                               checkpoint_frontier=self.frontier)


def _lease_key(lease: Lease) -> tuple[str, str, int]:
    return lease.operation_id, lease.kind, lease.token


def run_clock(clock: Clock | None, sleep: Callable[[float], None] | None) -> Clock:
    """The clock of a run: ``clock`` (the system clock when None), sleeping with ``sleep`` when
    a caller passes one (a test's recorder, or no wait at all)."""
    base = clock if clock is not None else SystemClock()
    return base if sleep is None else SleepingWith(base, sleep)


def failure_reason(outcome: Response | Failure | int) -> str:
    """A bounded description of a failed exchange: the failure class or the HTTP status."""
    if isinstance(outcome, int):
        return f"HTTP {outcome}"
    if isinstance(outcome, Response):
        return f"HTTP {outcome.status}"
    reason = f"{outcome.kind.value}: {outcome.detail}"
    return reason if len(reason) <= MAX_REASON_CHARS else reason[:MAX_REASON_CHARS - 1] + "…"


def scalars(values: Mapping[str, object]) -> dict[str, str | int]:
    """The string and integer values of ``values`` (booleans and structures dropped)."""
    return {key: value for key, value in values.items()
            if isinstance(value, str | int) and not isinstance(value, bool)}
