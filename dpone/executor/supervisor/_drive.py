"""The driver: every child of an admitted parent in ordinal order, up to the family's width in
flight, and the checkpoint frontier, which only this thread moves.

One child is driven by :func:`child` as far as it goes now: an empty child finalized by the
empty-input policy, a child left in flight by a lost run taken over as UNKNOWN, a submit, the
read-only observation of its receipt, the verification of its counters.

With a width of one (every asynchronous job, and a synchronous batch certified for one child in
flight) each child is driven here in turn. A wider synchronous batch starts children in ordinal
order on worker threads through the same per-child path (submit, then verify its counters); a
child with a recorded request (in flight, observing, verifying, finalized) is driven here once
every child before it has settled, so a stop the journal already holds is met before any later
child starts.

The frontier (:class:`Frontier`) is promoted as children finish (every ``stride`` children past
it, and when the run ends), so it stays contiguous: it stops before the first child that is not
verified, whatever order the others finished in.

The rule on an unknown effect is the send gate's (:class:`~._context.SendGate`): after the first stop no new
request starts and no further child is started; children already in flight finish and are
recorded; a child that was about to send waits in RETRY_WAIT (its attempt provably never
started). The run then reports the stop of the lowest ordinal (or raises its error) once every
child in flight has been recorded; a child still observing its receipt ends the run as pending.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, ParentOperation
from dpone.contracts.sealed import SealedChild
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
from dpone.executor.supervisor._context import Run, Withheld, scalars
from dpone.executor.supervisor._empty_input import finalize_empty
from dpone.executor.supervisor._journal_step import JournalSteps
from dpone.executor.supervisor._observe import observe, verify
from dpone.executor.supervisor._results import (
    ChildReceipt,
    DeliveryBlocked,
    DeliveryCompleted,
    DeliveryPending,
    DeliveryResult,
)
from dpone.executor.supervisor._submit import submit
from dpone.executor.supervisor._transitions import MUTATION_LEASE_LOST, state_of

ChildOutcome = ChildOperation | DeliveryBlocked | Withheld


class Frontier:
    """The contiguous checkpoint frontier of one parent, as this run promotes it."""

    def __init__(self, steps: JournalSteps, parent: ParentOperation, stride: int) -> None:
        self._steps = steps
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
        self.at = self._steps.promote(self._parent_id)


@dataclass
class _Outcomes:
    """What the children of one run ended with, by ordinal."""

    done: dict[int, ChildOperation] = field(default_factory=dict)
    stops: dict[int, DeliveryBlocked | BaseException] = field(default_factory=dict)
    pending: dict[int, ChildOperation] = field(default_factory=dict)


@dataclass
class _Driver:
    run: Run
    parent: ParentOperation
    frontier: Frontier
    pool: ThreadPoolExecutor | None
    outcomes: _Outcomes = field(default_factory=_Outcomes)
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
            self.outcomes.stops[operation.ordinal] = outcome
        elif isinstance(outcome, ChildOperation):
            if outcome.state_name in OBSERVING_STATES:
                self.outcomes.pending[operation.ordinal] = outcome
            else:
                self.outcomes.done[operation.ordinal] = outcome
                self.frontier.done(operation.ordinal)

    def _stopped(self, operation: ChildOperation, error: BaseException) -> None:
        self.run.gate.shut(operation.operation_id)
        self.outcomes.stops[operation.ordinal] = error

    @property
    def ended(self) -> bool:
        """No further child starts: a stop or a pending receipt is recorded, or the send gate
        shut for a child still running (a shut gate with nothing running has its stop
        recorded already: every shut ends its child with a stop)."""
        return (bool(self.outcomes.stops) or bool(self.outcomes.pending)
                or (bool(self.running) and self.run.gate.shut_by is not None))


def drive(run: Run, parent: ParentOperation, sealed: Mapping[int, SealedChild], *,
          wait: bool) -> DeliveryResult:
    """Drive every child of the admitted ``parent`` (``sealed``: the sealed child of every
    ordinal) with up to the family's width in flight (see the module doc); ``wait`` keeps
    observing an asynchronous job until it is terminal."""
    width = run.family.width
    children = sorted(parent.children, key=lambda child: child.ordinal)
    frontier = Frontier(run.steps, parent, run.family.stride)
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
    return _result(parent, children, frontier, driver.outcomes)


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
        return _take_over(run, operation)
    if operation.state_name in SUBMITTABLE_STATES or reconciled_absent(operation):
        submitted = submit(run, operation, sealed)
        if isinstance(submitted, DeliveryBlocked | Withheld):
            return submitted
        operation = submitted
    if operation.state_name in OBSERVING_STATES:
        observed = observe(run, operation, sealed, wait=wait)
        if isinstance(observed, DeliveryBlocked) or observed.state_name in OBSERVING_STATES:
            return observed
        operation = observed
    if operation.state_name in VERIFYING_STATES:
        return verify(run, operation, sealed)
    if operation.axes.checkpoint_state == "ELIGIBLE" or finished(operation):
        return operation
    return run.blocked(operation, operation.last_error_code or "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")


def _take_over(run: Run, operation: ChildOperation) -> DeliveryBlocked:
    """A child left in SUBMITTING by a lost worker: UNKNOWN under an observation lease."""
    with run.steps.lease(operation.operation_id, "mutation"):
        pass  # refused while the submitting worker still holds its lease: nothing to take over
    lost = MUTATION_LEASE_LOST[state_of(operation)]
    code = "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    with run.steps.lease(operation.operation_id, "observation") as lease:
        updated = run.steps.step(operation, lease, *lost, error_code=code)
    return run.blocked(updated, code)


def _result(parent: ParentOperation, children: Sequence[ChildOperation], frontier: Frontier,
            outcomes: _Outcomes) -> DeliveryResult:
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
                     state_name=done.state_name, attempt_ordinal=done.attempt_ordinal,
                     receipt=scalars(done.receipt or {}))
        for done in (outcomes.done[child.ordinal] for child in children))
    return DeliveryCompleted(parent_id=parent.parent_id, checkpoint_frontier=frontier.at,
                             children=receipts)
