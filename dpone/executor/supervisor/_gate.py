"""The send gate of one run: once any child's effect may be unknown, no new request starts.

Every request of a run passes :meth:`SendGate.admit` right before it is handed to the
transport. The gate shuts when the supervisor decides a stop (an effect it cannot prove, a
refusal, an error): from then on no new request leaves this run. Requests already in flight
finish and are recorded; a certified same-key replay is how such a request finishes, so it is
admitted; a child that was about to send its first request records that the attempt never
started and waits in RETRY_WAIT for the next run. With one child in flight the gate never
refuses anything the serial loop would have sent.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from dpone.contracts.journal import ChildOperation


class SendGate:
    """Open until :meth:`shut`; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._shut_by: str | None = None

    def admit(self, operation_id: str, *, replay: bool = False) -> bool:
        """True when ``operation_id`` may hand a request to the transport now."""
        with self._lock:
            return self._shut_by is None or replay or self._shut_by == operation_id

    def shut(self, operation_id: str) -> None:
        """No new request starts from now on (the first caller is kept as the reason)."""
        with self._lock:
            if self._shut_by is None:
                self._shut_by = operation_id

    @property
    def shut_by(self) -> str | None:
        with self._lock:
            return self._shut_by


@dataclass(frozen=True)
class Withheld:
    """A child whose request was about to start when the gate shut: the attempt provably never
    started, the child waits in RETRY_WAIT (due now), and the next run submits it."""

    operation: ChildOperation
