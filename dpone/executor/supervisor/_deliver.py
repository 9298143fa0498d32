"""The supervisor: admit the sealed topology, then drive each child in ordinal order.

Both protocol families share one driver (:func:`drive`, also behind ``resume``); a child moves
only through guarded journal transitions (:func:`child`):

* SEALED without rows (a date window the planner keeps for the coverage proof): no marker, no
  attempt, no request; :func:`finalize_empty` applies the profile's ``empty_input``: ``skip``
  finalizes it not started (the frontier passes over it), ``promote`` verifies an append's 0 of
  0 rows once the journal rechecked the overlap fence. An empty ``partition_replace`` under
  ``promote`` deletes the receiver's rows in its window, a real effect: it is submitted;
* SEALED / RETRY_WAIT: submit (``_submit``) under the mutation lease;
* SUBMITTING with an expired mutation lease (a lost run): replayed with the same key when a
  certification PASSes key binding and a key retention covering the first attempt's age
  (``take_over``), else UNKNOWN, never resent;
* ACCEPTED / WAITING (async): read-only ``poll_receipt`` (``_observe``); without ``wait`` the
  run returns :class:`DeliveryPending` once the receipt is durable and not yet due;
* VERIFYING: the receiver's counters against the sealed row count;
* verified in full: the child extends the contiguous frontier; anything else stops the run
  with :class:`DeliveryBlocked` and its evidence.

Up to the family's width of children are in flight (a synchronous batch's certified
``max_in_flight_children`` on worker threads, started in ordinal order; one remote job at a
time otherwise); a child with a recorded request is driven on the driver's thread once every
child before it has settled. Only that thread moves the frontier (:class:`Frontier`), every
``stride`` children past it and at the end, so it stays contiguous. After a stop no new request
starts (the send gate): children in flight finish and are recorded, a child about to send
waits in RETRY_WAIT, and the run reports the stop of the lowest ordinal.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from typing import Final

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.design import load_state_contract
from dpone.contracts.journal import ChildOperation, ParentOperation, SupervisorJournal
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import Clock, ImmutableArtifactPort, RestTransportPort
from dpone.contracts.sealed import SealedChild, SealedTopology
from dpone.contracts.state import StateName
from dpone.executor.supervisor._actions import (
    IN_FLIGHT_STATES,
    OBSERVING_STATES,
    SUBMITTABLE_STATES,
    VERIFYING_STATES,
    finished,
    reconciled_absent,
    submits_empty,
)
from dpone.executor.supervisor._admission import parent_admission
from dpone.executor.supervisor._context import Run, WaitObserver, Withheld, open_run, scalars
from dpone.executor.supervisor._decide import family_of
from dpone.executor.supervisor._journal_writer import JournalWriter, StepObserver
from dpone.executor.supervisor._observe import observe, verify
from dpone.executor.supervisor._results import (
    ChildReceipt,
    DeliveryBlocked,
    DeliveryCompleted,
    DeliveryPending,
    DeliveryResult,
)
from dpone.executor.supervisor._submit import PERMANENT_FENCE_REFUSALS, submit, take_over
from dpone.executor.supervisor._transitions import EMPTY_INPUT, FENCE_REFUSED
from dpone.observability import tracing
from dpone.observability.stages import stage

ChildOutcome = ChildOperation | DeliveryBlocked | Withheld
RESULT_NAMES: Final = {DeliveryCompleted: "completed", DeliveryPending: "incomplete",
                       DeliveryBlocked: "blocked"}


def deliver(plan: RestDeliveryPlan, topology: SealedTopology, journal: SupervisorJournal,
            artifacts: ImmutableArtifactPort, transport: RestTransportPort, *, holder: str,
            wait: bool = True, clock: Clock | None = None,
            sleep: Callable[[float], None] | None = None,
            rng: random.Random | None = None,
            observer: StepObserver | None = None,
            on_wait: WaitObserver | None = None,
            leases: LeasePolicy | None = None) -> DeliveryResult:
    """Deliver every sealed child of ``topology`` through the plan's operation profile.

    Admits the complete parent (resuming an admitted one), then submits, observes, verifies
    and promotes each child in ordinal order. ``wait`` keeps observing an asynchronous job
    in-process until it is terminal; without it the run returns :class:`DeliveryPending`.
    ``clock`` is the worker's clock port (the system clock when None); ``sleep`` replaces
    only its sleep.
    """
    run = open_run(plan, journal, artifacts, transport, holder=holder, clock=clock, sleep=sleep,
                   rng=rng, observer=observer, on_wait=on_wait, leases=leases)
    if not topology.children:
        raise DponeError(code="input.invalid_argument",
                         message="the boundary holds no rows: an empty topology is not admitted; "
                         "the profile's empty_input policy decides what an empty run means")
    fields = {"plan_digest": topology.plan_digest, "profile": run.telemetry.profile,
              "environment": run.telemetry.environment}
    with stage("deliver", **fields):
        with stage("admit", **fields):
            parent = run.writer.admit(parent_admission(plan, topology))
        return drive(run, parent, {child.descriptor.ordinal: child
                                   for child in topology.children}, wait=wait)


def deliver_sync(plan: RestDeliveryPlan, topology: SealedTopology, journal: SupervisorJournal,
                 artifacts: ImmutableArtifactPort, transport: RestTransportPort, *, holder: str,
                 clock: Clock | None = None, sleep: Callable[[float], None] | None = None,
                 rng: random.Random | None = None) -> DeliveryResult:
    """:func:`deliver` for a synchronous batch profile (refuses any other family)."""
    if family_of(plan.profile.snapshot).observes:
        raise DponeError(code="REST_DELIVERY_PROTOCOL_UNKNOWN",
                         message=f"profile {plan.profile.snapshot.ref} is not a synchronous "
                         "batch profile")
    return deliver(plan, topology, journal, artifacts, transport, holder=holder, clock=clock,
                   sleep=sleep, rng=rng)


class Frontier:
    """The contiguous checkpoint frontier of one parent, as this run promotes it."""

    def __init__(self, writer: JournalWriter, parent: ParentOperation, stride: int) -> None:
        self._writer = writer
        self._parent_id = parent.parent_id
        self._stride = stride
        self.at = parent.checkpoint_frontier
        self._done_to = 0
        """The highest ordinal this run finished."""

    def done(self, ordinal: int) -> None:
        """``ordinal`` is done: promote once ``stride`` children past the frontier are (a lost
        run's verified children are promoted by the next run: the frontier only ever lags, it
        never runs ahead)."""
        self._done_to = max(self._done_to, ordinal)
        if ordinal - self.at >= self._stride:
            self.promote()

    def flush(self) -> int:
        """Promote what :meth:`done` left for later; returns the frontier."""
        if self._done_to > self.at:
            self.promote()
        return self.at

    def promote(self) -> None:
        with tracing.span("dpone.child.promote", parent_id=self._parent_id):
            self.at = self._writer.promote(self._parent_id)


@dataclass
class _Driver:
    run: Run
    parent: ParentOperation
    frontier: Frontier
    pool: ThreadPoolExecutor | None
    done: dict[int, ChildOperation] = field(default_factory=dict)
    stops: dict[int, DeliveryBlocked | BaseException] = field(default_factory=dict)
    pending: dict[int, ChildOperation] = field(default_factory=dict)
    """What the children ended with, by ordinal: verified, stopped, still observing."""
    running: dict[Future[ChildOutcome], ChildOperation] = field(default_factory=dict)

    def settle(self, *, until_all: bool) -> None:
        """Record the children that finished (all of them with ``until_all``)."""
        finished, _ = wait(self.running,
                           return_when="ALL_COMPLETED" if until_all else FIRST_COMPLETED)
        for future in finished:
            self.record(self.running.pop(future), future.result)

    def record(self, operation: ChildOperation, outcome_of: Callable[[], ChildOutcome]) -> None:
        """Record where one child ended; extend the frontier when it is due."""
        try:
            outcome = outcome_of()
        except DponeError as error:  # raised once every child in flight is settled
            self._stopped(operation, error)
            return
        except BaseException as error:
            if self.pool is None:
                raise  # one child at a time: nothing else in flight to wait for
            self._stopped(operation, error)
            return
        if isinstance(outcome, DeliveryBlocked):
            self.stops[operation.ordinal] = outcome
        elif isinstance(outcome, ChildOperation):
            if outcome.state_name in OBSERVING_STATES:
                self.pending[operation.ordinal] = outcome
            else:
                self.done[operation.ordinal] = outcome
                self.frontier.done(operation.ordinal)

    def _stopped(self, operation: ChildOperation, error: BaseException) -> None:
        self.run.gate.shut(operation.operation_id)
        self.stops[operation.ordinal] = error

    @property
    def ended(self) -> bool:
        """No further child starts: a stop or a pending receipt is recorded, or the send gate
        shut for a child still running (a shut gate with nothing running has its stop
        recorded already: every shut ends its child with a stop)."""
        return (bool(self.stops) or bool(self.pending)
                or (bool(self.running) and self.run.gate.shut_by is not None))


def drive(run: Run, parent: ParentOperation, sealed: Mapping[int, SealedChild], *,
          wait: bool) -> DeliveryResult:
    """Drive every child of the admitted ``parent`` (``sealed``: the sealed child of every
    ordinal) with up to the family's width in flight (see the module doc); ``wait`` keeps
    observing an asynchronous job until it is terminal."""
    width = run.family.width
    run.telemetry.admitted(parent.plan_digest)
    tracing.annotate(parent_id=parent.parent_id)
    children = sorted(parent.children, key=lambda child: child.ordinal)
    frontier = Frontier(run.writer, parent, run.family.stride)
    with contextlib.ExitStack() as stack:
        pool = None if width == 1 else stack.enter_context(
            ThreadPoolExecutor(max_workers=width, thread_name_prefix="dpone-child"))
        driver = _Driver(run, parent, frontier, pool)
        for operation in children:
            fresh = pool is not None and (operation.state_name in SUBMITTABLE_STATES
                                          or reconciled_absent(operation))
            while driver.running and (len(driver.running) >= width or not fresh):
                driver.settle(until_all=not fresh)
            if driver.ended:
                break
            step = partial(child, run, operation, sealed[operation.ordinal], wait=wait)
            if pool is not None and fresh:
                driver.running[pool.submit(step)] = operation
            else:
                driver.record(operation, step)
        while driver.running:
            driver.settle(until_all=True)
    try:
        result = _result(parent, children, frontier, driver)
    except BaseException:
        run.telemetry.ended("blocked")
        raise
    run.telemetry.ended(RESULT_NAMES[type(result)])
    return result


def child(run: Run, operation: ChildOperation, sealed: SealedChild, *,
           wait: bool) -> ChildOperation | DeliveryBlocked | Withheld:
    """Drive one child as far as it goes now; a returned operation is done or still observing."""
    if (operation.state_name == StateName.SEALED and operation.without_rows
            and not submits_empty(run.plan)):
        finalized = finalize_empty(run, operation)  # an empty child sends nothing
        if isinstance(finalized, DeliveryBlocked):
            return finalized
        operation = finalized
    if operation.state_name in IN_FLIGHT_STATES:
        with run.telemetry.child("submit", operation):
            taken = take_over(run, operation, sealed)
        if isinstance(taken, DeliveryBlocked | Withheld):
            return taken
        operation = taken
    elif operation.state_name in SUBMITTABLE_STATES or reconciled_absent(operation):
        with run.telemetry.child("submit", operation):
            submitted = submit(run, operation, sealed)
        if isinstance(submitted, DeliveryBlocked | Withheld):
            return submitted
        operation = submitted
    if operation.state_name in OBSERVING_STATES:
        with run.telemetry.child("observe", operation):
            observed = observe(run, operation, sealed, wait=wait)
        if isinstance(observed, DeliveryBlocked) or observed.state_name in OBSERVING_STATES:
            return observed
        operation = observed
    if operation.state_name in VERIFYING_STATES:
        with run.telemetry.child("verify", operation):
            return verify(run, operation, sealed)
    if operation.axes.checkpoint_state == "ELIGIBLE" or finished(operation):
        return operation
    return run.blocked(operation, operation.last_error_code or "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")


def finalize_empty(run: Run, operation: ChildOperation) -> ChildOperation | DeliveryBlocked:
    """Finalize the sealed child ``operation`` (no rows) without a request, by the profile's
    empty-input policy."""
    policy = run.plan.profile.snapshot.result_policy.empty_input
    # The parent artifact is the complete frozen read of the boundary (verified at freeze).
    finalized = EMPTY_INPUT.get((policy, run.plan.source_boundary.mutation_kind))
    if finalized is None:  # an empty replacement is submitted, never finalized here
        raise DponeError(code="journal.illegal_transition", operation_id=operation.operation_id,
                         message=f"a {run.plan.source_boundary.mutation_kind} child without rows "
                         "replaces its window with nothing at the receiver; it is submitted, "
                         "never verified without a request")
    with run.writer.lease(operation.operation_id, "mutation") as lease:
        if policy == "skip":
            return run.writer.step(operation, lease, *finalized)
        try:
            return run.writer.step(operation, lease, *finalized)
        except DponeError as refusal:
            if refusal.code not in PERMANENT_FENCE_REFUSALS:
                raise
            refused = run.writer.step(operation, lease, *FENCE_REFUSED, error_code=refusal.code)
            return run.blocked(refused, refusal.code)


def _promoted(state_name: str, within_frontier: bool) -> str:
    """Where the frontier's promotion moved a child that stood in ``state_name`` (the promotion
    transition's target), as the journal now holds it; its state as it is otherwise."""
    if not within_frontier:
        return state_name
    promotions = [listed.target for listed in load_state_contract().outgoing(state_name)
                  if listed.lease == "checkpoint"]
    return promotions[0] if len(promotions) == 1 else state_name


def _result(parent: ParentOperation, children: Sequence[ChildOperation], frontier: Frontier,
            outcomes: _Driver) -> DeliveryResult:
    if any(isinstance(stop, BaseException) for stop in outcomes.stops.values()):
        with contextlib.suppress(DponeError):  # the error raised below is the one to report
            frontier.flush()
    else:
        frontier.flush()
    if outcomes.stops:
        stop = outcomes.stops[min(outcomes.stops)]
        if isinstance(stop, BaseException):
            raise stop
        return stop.model_copy(update={"checkpoint_frontier": frontier.at})
    if outcomes.pending:
        observing = outcomes.pending[min(outcomes.pending)]
        return DeliveryPending(parent_id=parent.parent_id, operation_id=observing.operation_id,
                               ordinal=observing.ordinal, state_name=observing.state_name,
                               receipt=scalars(observing.receipt or {}),
                               next_check_after=observing.next_check_after,
                               checkpoint_frontier=frontier.at,
                               children_total=len(parent.children))
    if len(outcomes.done) != len(children) or frontier.at < children[-1].ordinal:
        raise DponeError(code="journal.illegal_transition", operation_id=parent.parent_id,
                         message="every child finished but the checkpoint frontier stopped at "
                                 f"{frontier.at} of {children[-1].ordinal}")
    receipts = tuple(
        ChildReceipt(operation_id=done.operation_id, ordinal=done.ordinal,
                     state_name=_promoted(done.state_name, done.ordinal <= frontier.at),
                     attempt_ordinal=done.attempt_ordinal, receipt=scalars(done.receipt or {}))
        for done in (outcomes.done[child.ordinal] for child in children))
    return DeliveryCompleted(parent_id=parent.parent_id, checkpoint_frontier=frontier.at,
                             children=receipts, children_total=len(children),
                             rows_total=sum(child.row_count for child in children),
                             boundary_from=parent.boundary_from, boundary_to=parent.boundary_to,
                             plan_digest=parent.plan_digest)
