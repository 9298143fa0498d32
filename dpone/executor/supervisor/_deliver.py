"""The supervisor: admit the sealed topology, then drive each child in ordinal order.

Both protocol families share one driver (``_drive``, also behind ``resume``); a child moves
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
(``_drive``); after an unknown or partial effect no new request starts (the run's send gate),
the ones in flight finish and are recorded, and the frontier stays contiguous. A child found in
SUBMITTING whose mutation lease has expired is taken over for observation only: its outcome is
UNKNOWN, and it is never resent.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import ParentOperation, SupervisorJournal
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import Clock, ImmutableArtifactPort, RestTransportPort
from dpone.contracts.sealed import SealedChild, SealedTopology
from dpone.executor.supervisor._admission import parent_admission
from dpone.executor.supervisor._context import Run, WaitObserver, open_run
from dpone.executor.supervisor._decide import check_profile, family_of
from dpone.executor.supervisor._drive import drive
from dpone.executor.supervisor._journal_step import StepObserver
from dpone.executor.supervisor._results import DeliveryResult

__all__ = ["check_profile", "deliver", "deliver_parent", "deliver_sync"]


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
    parent = run.steps.admit(parent_admission(plan, topology))
    return deliver_parent(run, parent, {child.descriptor.ordinal: child
                                        for child in topology.children}, wait=wait)


def deliver_parent(run: Run, parent: ParentOperation, sealed: Mapping[int, SealedChild], *,
                   wait: bool) -> DeliveryResult:
    """Drive every child of the admitted ``parent`` from its journal state (``sealed``: the
    sealed child of every ordinal). Shared by :func:`deliver` (after admission) and
    :func:`~dpone.executor.supervisor.resume` (from the journal alone)."""
    return drive(run, parent, sealed, wait=wait)


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
