"""Heartbeat-extended leases: a held lease is renewed while the process that holds it lives.

A run takes each lease for the environment's short ``leases.ttl_s`` and a daemon thread renews
it every ``heartbeat_s``. A process killed at any point stops renewing, so its children are
free for recovery within one TTL (minutes at most), not after the whole submit budget. The
journal decides expiry by its own clock and rechecks the lease in every transaction that
relies on it, so a renewal that fails only shortens the time the holder may still act.
"""

from __future__ import annotations

import threading
from typing import Protocol

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import Lease


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
