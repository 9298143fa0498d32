"""The supervisor: admit the sealed topology, then drive each child in ordinal order.

Both protocol families share one loop (:func:`drive`, also behind ``resume``); a child moves
only through guarded journal transitions:

* SEALED without rows: finalized without a request by the profile's empty-input policy
  (``_empty_input``): skipped (the frontier passes over it) or, for an append, verified 0 of 0
  and promoted; a replacement under ``promote`` is submitted like any other child;
* SEALED / RETRY_WAIT: submit (``_submit``) under the mutation lease;
* ACCEPTED / WAITING (async): read-only ``poll_receipt`` (``_observe``); without ``wait`` the
  run returns :class:`DeliveryPending` once the receipt is durable and not yet due;
* VERIFYING: the receiver's counters against the sealed row count;
* a finalized child that is fully applied and verified extends the contiguous frontier;
  anything else stops the run with :class:`DeliveryBlocked` and its evidence.

An asynchronous job runs one child at a time (one remote job). Synchronous batches start in
ordinal order with up to the profile's certified ``max_in_flight_children`` in flight
(``_window``); after an unknown or partial effect no new request starts (the run's send gate),
the ones in flight finish and are recorded, and the frontier stays contiguous. A child found in
SUBMITTING whose mutation lease has expired is taken over for observation only: its outcome is
UNKNOWN, and it is never resent.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Mapping
from typing import Final

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, ParentOperation
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
from dpone.executor.supervisor._context import (
    RunContext,
    StepObserver,
    WaitObserver,
    run_clock,
    scalars,
)
from dpone.executor.supervisor._empty_input import finalize_empty
from dpone.executor.supervisor._gate import Withheld
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
from dpone.executor.supervisor._window import drive_window, in_flight_width

FAMILIES: Final = {"sync_batch": "submit_response", "async_bulk_job": "poll_response"}


def deliver(plan: RestDeliveryPlan, topology: SealedTopology, journal: DeliveryJournalPort,
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
    check_profile(plan)
    if not topology.children:
        raise DponeError(code="input.invalid_argument",
                         message="the boundary holds no rows: an empty topology is not admitted; "
                         "the profile's empty_input policy decides what an empty run means")
    parent = journal.admit_parent(parent_admission(plan, topology)).parent
    ctx = RunContext(plan, journal, artifacts, transport, holder, run_clock(clock, sleep),
                     rng or random.Random(), observer, frontier=parent.checkpoint_frontier,
                     on_wait=on_wait, leases=leases or LeasePolicy())
    return drive(ctx, parent, {child.descriptor.ordinal: child for child in topology.children},
                 wait=wait)


def drive(ctx: RunContext, parent: ParentOperation, sealed: Mapping[int, SealedChild], *,
          wait: bool) -> DeliveryResult:
    """Drive every child of the admitted ``parent`` in ordinal order from its journal state.

    ``sealed`` holds the sealed child of every ordinal. Shared by :func:`deliver` (after
    admission) and :func:`~dpone.executor.supervisor.resume` (from the journal alone).
    """
    width = in_flight_width(ctx)
    if width > 1:
        return drive_window(ctx, parent, sealed, lambda c, o, s: _child(c, o, s, wait=wait),
                            width=width)
    try:
        return _drive_serially(ctx, parent, sealed, wait=wait)
    except DponeError:
        with contextlib.suppress(DponeError):  # the verified children before the error
            ctx.flush_frontier(parent.parent_id)
        raise


def _drive_serially(ctx: RunContext, parent: ParentOperation, sealed: Mapping[int, SealedChild],
                    *, wait: bool) -> DeliveryResult:
    receipts: list[ChildReceipt] = []
    for operation in sorted(parent.children, key=lambda child: child.ordinal):
        outcome = _child(ctx, operation, sealed[operation.ordinal], wait=wait)
        if isinstance(outcome, Withheld):  # only a window withholds a request
            raise DponeError(code="journal.illegal_transition",
                             operation_id=outcome.operation.operation_id,
                             message="a request was withheld by a run with one child in flight")
        if not isinstance(outcome, ChildOperation):
            return outcome.model_copy(
                update={"checkpoint_frontier": ctx.flush_frontier(parent.parent_id)})
        if outcome.state_name in OBSERVING_STATES:
            ctx.flush_frontier(parent.parent_id)
            return DeliveryPending(parent_id=parent.parent_id, operation_id=outcome.operation_id,
                                   ordinal=outcome.ordinal, state_name=outcome.state_name,
                                   receipt=scalars(outcome.receipt or {}),
                                   next_check_after=outcome.next_check_after,
                                   checkpoint_frontier=ctx.frontier,
                                   children_total=len(parent.children))
        ctx.promote_verified(parent.parent_id, outcome.ordinal)
        receipts.append(ChildReceipt(operation_id=outcome.operation_id, ordinal=outcome.ordinal,
                                     state_name=outcome.state_name,
                                     attempt_ordinal=outcome.attempt_ordinal,
                                     receipt=scalars(outcome.receipt or {})))
    last = max((child.ordinal for child in parent.children), default=0)
    if ctx.flush_frontier(parent.parent_id) < last:
        raise DponeError(code="journal.illegal_transition", operation_id=parent.parent_id,
                         message="every child is verified but the checkpoint frontier stopped "
                         f"at {ctx.frontier} of {last}")
    return DeliveryCompleted(parent_id=parent.parent_id, checkpoint_frontier=ctx.frontier,
                             children=tuple(receipts))


def check_profile(plan: RestDeliveryPlan) -> None:
    """Refuse, before any freeze, seal or HTTP, a profile this supervisor cannot drive."""
    profile = plan.profile.snapshot
    if FAMILIES.get(profile.protocol_family) != profile.verification.counters_from:
        raise DponeError(code="profile.unsupported_family",
                         message=f"profile {profile.ref}: protocol family "
                         f"{profile.protocol_family!r} with counters from "
                         f"{profile.verification.counters_from!r} is not supported")
    if profile.protocol_family == "async_bulk_job" and profile.acknowledgement.poll is None:
        raise DponeError(code="profile.unsupported_family",
                         message=f"profile {profile.ref} declares no receipt poll")


def _child(ctx: RunContext, operation: ChildOperation, sealed: SealedChild, *,
           wait: bool) -> ChildOperation | DeliveryBlocked | Withheld:
    """Drive one child as far as it goes now; a returned operation is done or still observing."""
    if (operation.state_name == StateName.SEALED and operation.without_rows
            and not submits_empty(ctx.plan)):
        finalized = finalize_empty(ctx, operation)  # an empty child sends nothing
        if isinstance(finalized, DeliveryBlocked):
            return finalized
        operation = finalized
    if operation.state_name in IN_FLIGHT_STATES:
        return _take_over(ctx, operation)
    if operation.state_name in SUBMITTABLE_STATES or reconciled_absent(operation):
        submitted = submit(ctx, operation, sealed)
        if isinstance(submitted, DeliveryBlocked | Withheld):
            return submitted
        operation = submitted
    if operation.state_name in OBSERVING_STATES:
        observed = observe(ctx, operation, sealed, wait=wait)
        if isinstance(observed, DeliveryBlocked) or observed.state_name in OBSERVING_STATES:
            return observed
        operation = observed
    if operation.state_name in VERIFYING_STATES:
        return verify(ctx, operation, sealed)
    if operation.axes.checkpoint_state == "ELIGIBLE" or finished(operation):
        return operation
    return ctx.blocked(operation, operation.last_error_code or "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")


def _take_over(ctx: RunContext, operation: ChildOperation) -> DeliveryBlocked:
    """A child left in SUBMITTING by a lost worker: UNKNOWN under an observation lease."""
    with ctx.lease(operation.operation_id, "mutation"):
        pass  # refused while the submitting worker still holds its lease: nothing to take over
    lost = MUTATION_LEASE_LOST[state_of(operation)]
    code = "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    with ctx.lease(operation.operation_id, "observation") as lease:
        updated = ctx.step(operation, lease, *lost, error_code=code)
    return ctx.blocked(updated, code)


def deliver_sync(plan: RestDeliveryPlan, topology: SealedTopology, journal: DeliveryJournalPort,
                 artifacts: ImmutableArtifactPort, transport: RestTransportPort, *, holder: str,
                 clock: Clock | None = None, sleep: Callable[[float], None] | None = None,
                 rng: random.Random | None = None) -> DeliveryResult:
    """:func:`deliver` for a synchronous batch profile (refuses any other family)."""
    if plan.profile.snapshot.protocol_family != "sync_batch":
        raise DponeError(code="REST_DELIVERY_PROTOCOL_UNKNOWN",
                         message=f"profile {plan.profile.snapshot.ref} is not a synchronous "
                         "batch profile")
    return deliver(plan, topology, journal, artifacts, transport, holder=holder, clock=clock,
                   sleep=sleep, rng=rng)
