"""Audited operator authority: the operator lease and the audit row of one operator command.

An operator command that moves a delivery (`dpone delivery resume --apply`) first takes the
``operator`` lease of the delivery (the parent operation) with the operator as its holder, so a
second operator command on the same delivery is refused with ``journal.lease_held`` naming
who holds it and until when. When the command ends, however it ends, it appends one audit row
``operator_<command>`` on the delivery and then releases the lease.

The row's shape (one per delivery, not per child): ``revision`` and ``after_revision`` are the
delivery's revision after the command, ``before_revision`` before it, where a delivery's
revision is the sum of its children's revisions (it grows by one with every child transition,
so the difference counts the transitions the command made); ``from_state``/``to_state`` are the
delivery's status before and after (``blocked``, ``pending``, ``completed``...); ``details``
lists each child it moved (operation id, ordinal, revisions and state names before and after)
and the lease token it held.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import (
    DeliveryJournalPort,
    Lease,
    OperatorAction,
    OperatorActionRecord,
    ParentOperation,
)
from dpone.executor.supervisor import Heartbeat, delivery_status


def delivery_revision(parent: ParentOperation) -> int:
    """The delivery's revision: the sum of its children's revisions."""
    return sum(child.revision for child in parent.children)


def _moved(before: ParentOperation, after: ParentOperation) -> list[dict[str, Any]]:
    earlier = {child.operation_id: child for child in before.children}
    return [{"operation_id": child.operation_id, "ordinal": child.ordinal,
             "before_revision": earlier[child.operation_id].revision,
             "after_revision": child.revision,
             "from_state": earlier[child.operation_id].state_name, "to_state": child.state_name}
            for child in sorted(after.children, key=lambda c: c.ordinal)
            if child.operation_id in earlier
            and child.revision != earlier[child.operation_id].revision]


class OperatorAuthority:
    """``with OperatorAuthority(journal, parent_id, actor, "resume"):`` holds the delivery's
    operator lease for the block, then records the action and releases the lease on every
    exit path (an audit failure never hides the block's own error). The lease lasts the
    environment's ``leases.ttl_s`` and is renewed by heartbeat while the command runs, so a
    killed command frees the delivery within one TTL."""

    def __init__(self, journal: DeliveryJournalPort, parent_id: str, actor: str,
                 command: str, leases: LeasePolicy | None = None) -> None:
        self._journal = journal
        self._parent_id = parent_id
        self._actor = actor
        self._command = command
        self._lease: Lease | None = None
        self._leases = leases or LeasePolicy()
        self._heartbeat: Heartbeat | None = None
        self._before: ParentOperation | None = None
        self.recorded: OperatorAction | None = None

    def __enter__(self) -> OperatorAuthority:
        self._lease = self._journal.acquire_lease(self._parent_id, "operator", self._actor,
                                                  self._leases.ttl_s)
        self._heartbeat = Heartbeat(self._journal, self._lease, self._leases).start()
        try:
            self._before = self._journal.load_parent(self._parent_id)
        except BaseException:
            self._release(failing=True)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        failing = exc is not None
        try:
            self._record(failing=failing)
        finally:
            self._release(failing=failing)

    def _record(self, *, failing: bool) -> None:
        if self._before is None or self._lease is None:
            return
        try:
            after = self._journal.load_parent(self._parent_id)
            self.recorded = self._journal.record_operator_action(OperatorActionRecord(
                operation_id=self._parent_id, command=self._command, actor=self._actor,
                before_revision=delivery_revision(self._before),
                after_revision=delivery_revision(after),
                from_state=delivery_status(self._before.children),
                to_state=delivery_status(after.children),
                details={"children": _moved(self._before, after),
                         "lease_token": self._lease.token}))
        except DponeError:
            if not failing:
                raise

    def _release(self, *, failing: bool) -> None:
        lease, self._lease = self._lease, None
        if self._heartbeat is not None:
            self._heartbeat.stop()
        if lease is None:
            return
        try:
            self._journal.release_lease(lease)
        except DponeError:
            if not failing:
                raise
