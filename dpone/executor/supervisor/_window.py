"""Bounded child concurrency for synchronous batches: the profile's ``max_in_flight_children``.

Children start in ordinal order, at most ``width`` at a time, each on a worker thread through
the same per-child path as the serial loop (submit, then verify its counters). The coordinating
thread alone promotes the checkpoint frontier as children finish (every few children, and when
the window ends), so it stays contiguous: it stops before the first child that is not verified,
whatever order the others finished in.

The rule on an unknown effect is the send gate's (:mod:`._gate`): after the first stop no new
request starts and no further child is started; children already in flight finish and are
recorded; a child that was about to send waits in RETRY_WAIT (its attempt provably never
started). The run then reports the stop of the lowest ordinal (or raises its error) once every
child in flight has been recorded. Asynchronous jobs always run one child at a time.
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
from dpone.executor.supervisor._actions import SUBMITTABLE_STATES, reconciled_absent
from dpone.executor.supervisor._context import RunContext, scalars
from dpone.executor.supervisor._gate import Withheld
from dpone.executor.supervisor._results import (
    ChildReceipt,
    DeliveryBlocked,
    DeliveryCompleted,
    DeliveryResult,
)

ChildStep = Callable[[RunContext, ChildOperation, SealedChild],
                     ChildOperation | DeliveryBlocked | Withheld]


@dataclass
class _Outcomes:
    """What the children of one window ended with, by ordinal."""

    done: dict[int, ChildOperation] = field(default_factory=dict)
    stops: dict[int, DeliveryBlocked | BaseException] = field(default_factory=dict)


def in_flight_width(ctx: RunContext) -> int:
    """How many children this run may have in flight: for a synchronous batch the profile's
    certified ``max_in_flight_children``, within its active-request and remote-job bounds (every
    attempt holds one of the effect domain's remote-job slots); one for an asynchronous job (V1).
    """
    profile = ctx.plan.profile.snapshot
    if profile.protocol_family != "sync_batch":
        return 1
    rate = profile.rate
    return min(profile.max_in_flight_children, rate.max_active_requests,
               rate.max_active_remote_jobs)


def drive_window(ctx: RunContext, parent: ParentOperation, sealed: Mapping[int, SealedChild],
                 child_step: ChildStep, *, width: int) -> DeliveryResult:
    """Drive every child of ``parent`` with up to ``width`` in flight (see the module doc).

    Only a child that is about to be submitted (SEALED, RETRY_WAIT, or proven not applied by a
    reconciliation) goes to a worker; a child with a recorded request (in flight, observing,
    verifying, finalized) is driven here once every child before it has settled, so a stop the
    journal already holds is met before any later child starts."""
    children = sorted(parent.children, key=lambda child: child.ordinal)
    outcomes = _Outcomes()
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="dpone-child") as pool:
        running: dict[Future[ChildOperation | DeliveryBlocked | Withheld], ChildOperation] = {}
        for operation in children:
            fresh = operation.state_name in SUBMITTABLE_STATES or reconciled_absent(operation)
            while running and (len(running) >= width or not fresh):
                _settle(ctx, parent, running, outcomes, until_all=not fresh)
            if ctx.gate.shut_by is not None or outcomes.stops:
                break
            if fresh:
                running[pool.submit(child_step, ctx, operation,
                                    sealed[operation.ordinal])] = operation
            else:
                _record(ctx, parent, operation, outcomes,
                        partial(child_step, ctx, operation, sealed[operation.ordinal]))
        while running:
            _settle(ctx, parent, running, outcomes, until_all=True)
    return _result(ctx, parent, children, outcomes)


def _settle(ctx: RunContext, parent: ParentOperation,
            running: dict[Future[ChildOperation | DeliveryBlocked | Withheld], ChildOperation],
            outcomes: _Outcomes, *, until_all: bool) -> None:
    """Record the children that finished (all of them with ``until_all``) and promote."""
    finished, _ = wait(running, return_when="ALL_COMPLETED" if until_all else FIRST_COMPLETED)
    for future in finished:
        _record(ctx, parent, running.pop(future), outcomes, future.result)


def _record(ctx: RunContext, parent: ParentOperation, operation: ChildOperation,
            outcomes: _Outcomes,
            outcome_of: Callable[[], ChildOperation | DeliveryBlocked | Withheld]) -> None:
    """Record where one child ended; extend the frontier when it is the next one."""
    try:
        outcome = outcome_of()
    except BaseException as error:  # raised once every child in flight is settled
        ctx.gate.shut(operation.operation_id)
        outcomes.stops[operation.ordinal] = error
        return
    if isinstance(outcome, DeliveryBlocked):
        outcomes.stops[operation.ordinal] = outcome
    elif isinstance(outcome, ChildOperation):
        outcomes.done[operation.ordinal] = outcome
        ctx.promote_verified(parent.parent_id, operation.ordinal)


def _result(ctx: RunContext, parent: ParentOperation, children: Sequence[ChildOperation],
            outcomes: _Outcomes) -> DeliveryResult:
    if any(isinstance(stop, BaseException) for stop in outcomes.stops.values()):
        with contextlib.suppress(DponeError):  # the error raised below is the one to report
            ctx.flush_frontier(parent.parent_id)
    else:
        ctx.flush_frontier(parent.parent_id)
    if outcomes.stops:
        stop = outcomes.stops[min(outcomes.stops)]
        if isinstance(stop, BaseException):
            raise stop
        return stop.model_copy(update={"checkpoint_frontier": ctx.frontier})
    if len(outcomes.done) != len(children) or ctx.frontier < children[-1].ordinal:
        raise DponeError(code="journal.illegal_transition", operation_id=parent.parent_id,
                         message="every child finished but the checkpoint frontier stopped at "
                                 f"{ctx.frontier} of {children[-1].ordinal}")
    receipts = tuple(
        ChildReceipt(operation_id=done.operation_id, ordinal=done.ordinal,
                     state_name=done.state_name, attempt_ordinal=done.attempt_ordinal,
                     receipt=scalars(done.receipt or {}))
        for done in (outcomes.done[child.ordinal] for child in children))
    return DeliveryCompleted(parent_id=parent.parent_id, checkpoint_frontier=ctx.frontier,
                             children=receipts)
