"""Taking over a child a lost run left behind: wait out its lease, record the lost submit.

A dead run's leases expire by the journal clock within ``leases.ttl_s``. An operator command
that takes a child over (`resume --apply`, `reconcile --apply` of a child left in SUBMITTING)
waits that long at most instead of refusing (a live holder renews its lease: the command then
refuses with ``journal.lease_held``). A child left in SUBMITTING becomes UNKNOWN under an
observation lease (:func:`lost_submit`, the driver's takeover too): nothing is resent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import ChildOperation, LeaseKindName, SupervisorJournal
from dpone.contracts.ports import Clock
from dpone.contracts.state import StateContract
from dpone.executor.supervisor._actions import IN_FLIGHT_STATES
from dpone.executor.supervisor._journal_writer import JournalWriter
from dpone.executor.supervisor._transitions import MUTATION_LEASE_LOST, state_of

MARGIN_S: Final = 2.0
"""Seconds waited beyond a lease's expiry (the journal clock and this one may differ)."""

LeaseWait = Callable[[str, str, str, int], None]
"""Told (operation id, holder, expires_at, seconds left) before each wait."""


def await_lease(journal: SupervisorJournal, operation_id: str, kind: LeaseKindName, *,
                holder: str, leases: LeasePolicy, clock: Clock,
                on_wait: LeaseWait | None = None) -> None:
    """Return once no other holder's ``kind`` lease on ``operation_id`` is live (taking and
    releasing it proves that); wait for an expiring one at most the lease TTL plus a margin,
    then refuse with the journal's ``journal.lease_held`` (a live holder renews its lease)."""
    deadline = clock.monotonic() + leases.ttl_s + MARGIN_S
    writer = JournalWriter(journal, holder, leases)
    while True:
        try:
            writer.probe(operation_id, kind)
        except DponeError as error:
            if error.code != "journal.lease_held":
                raise
            left = error.details.get("expires_in_s")
            if not isinstance(left, int):
                continue  # released between the take and the read: take it again
            if clock.monotonic() + left > deadline:
                raise
            if on_wait is not None:
                on_wait(operation_id, str(error.details.get("holder")),
                        str(error.details.get("expires_at")), left)
            clock.sleep(left + MARGIN_S / 2)
            continue
        return


def record_lost_submit(journal: SupervisorJournal, operation: ChildOperation, *, holder: str,
                       leases: LeasePolicy, clock: Clock,
                       on_wait: LeaseWait | None = None) -> ChildOperation:
    """A child left in SUBMITTING (or a fenced replay) by a lost run, once its mutation lease
    has expired: its effect UNKNOWN, recorded under an observation lease. Any other child is
    returned as it is."""
    if operation.state_name not in IN_FLIGHT_STATES:
        return operation
    await_lease(journal, operation.operation_id, "mutation", holder=holder, leases=leases,
                clock=clock, on_wait=on_wait)
    operation = journal.get_child(operation.operation_id)
    if operation.state_name not in IN_FLIGHT_STATES:
        return operation  # its run settled it after all
    return lost_submit(JournalWriter(journal, holder, leases), operation)


def lost_submit(writer: JournalWriter, operation: ChildOperation) -> ChildOperation:
    """The in-flight ``operation``, whose mutation lease is free, recorded with an UNKNOWN
    effect under an observation lease: the request may have reached the receiver, nothing is
    resent."""
    with writer.lease(operation.operation_id, "observation") as lease:
        return writer.step(operation, lease, *MUTATION_LEASE_LOST[state_of(operation)],
                          error_code="REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")


def projected_lost_submit(contract: StateContract, operation: ChildOperation) -> ChildOperation:
    """``operation`` as :func:`record_lost_submit` would leave it (a preview: nothing is
    written); any child not in flight is returned as it is."""
    if operation.state_name not in IN_FLIGHT_STATES:
        return operation
    target = contract.transitions[MUTATION_LEASE_LOST[state_of(operation)].transition.value].target
    return operation.model_copy(update={
        "state_name": target, "axes": contract.tuples[target],
        "revision": operation.revision + 1,
        "last_error_code": "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"})
