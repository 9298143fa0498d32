"""How `dpone deliver` and `dpone delivery resume` run a delivery: the lease holder, the journal
and the lazy transport of one run, and its progress lines on stderr. What a run prints when it
ends is :mod:`dpone.cli.delivery._delivery_result`.

When the test variable ``DPONE_TEST_CUT`` names a cut point, :func:`delivery_ports` hands the
run a journal, an artifact store and a transport that SIGKILL the process at that point
(:mod:`dpone.executor.cuts`); unset, the ports are passed on as they are."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import click

from dpone.cli._inputs import Journal, close_quietly, open_identified_journal
from dpone.cli._progress import MAX_LINES, Progress
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, SupervisorJournal
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedChild, SealedTopology
from dpone.contracts.secret import Credential
from dpone.executor.cuts import CutHook, CuttingArtifacts, CuttingJournal, cut_points, hook_from
from dpone.executor.supervisor import RetryWait
from dpone.executor.transport import (
    OutboundRequest,
    RestTransportPort,
    TransportOutcome,
    transport_for,
)


def holder() -> str:
    """The lease holder of this process."""
    return f"dpone-cli:{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class SealedShape:
    """What the summary shows of a sealed delivery: its boundary, children and row total."""

    boundary_from: dt.date
    boundary_to: dt.date
    children: tuple[SealedChild, ...]
    rows_total: int

    @classmethod
    def of_topology(cls, topology: SealedTopology) -> SealedShape:
        return cls(topology.coverage.boundary_from, topology.coverage.boundary_to,
                   topology.children, topology.total_rows)


class StepPrinter:
    """Progress of a delivery run on stderr.

    Up to :data:`~dpone.cli._progress.MAX_LINES` children: one line per journal step (the
    child, its scope and the state it reached). Beyond that: a counter of finished children
    (a bar on a terminal, bounded plain lines otherwise). In both: one line per failed submit
    or receipt poll that the run repeats, with the reason and the next attempt's time. Children
    in flight at once report from their own threads: one line at a time.
    """

    def __init__(self, shape: SealedShape) -> None:
        self._total = len(shape.children)
        self._scopes = {c.descriptor.ordinal: f"[{c.descriptor.scope_from}, {c.descriptor.scope_to})"
                        for c in shape.children}
        self._progress = Progress("delivering", "finished child")
        self._detailed = self._total <= MAX_LINES
        self._finished: set[int] = set()
        self._lock = threading.Lock()

    def __call__(self, operation: ChildOperation, transition_id: str) -> None:
        with self._lock:
            self._step(operation, transition_id)

    def _step(self, operation: ChildOperation, transition_id: str) -> None:
        if not self._detailed:
            if operation.axes.execution_state == "FINALIZED":
                self._finished.add(operation.ordinal)
                self._progress(len(self._finished), self._total)
            return
        receipt = operation.receipt or {}
        shown = receipt.get("id") or receipt.get("batch_id") or ""
        phase = f" phase={receipt['phase']}" if "phase" in receipt else ""
        attempt = f" attempt {operation.attempt_ordinal}" if transition_id == "enter_submitting" else ""
        self._progress.note(f"  {self._child(operation.ordinal)} {operation.state_name}{attempt}"
                            f"{phase} {shown}".rstrip())

    def wait(self, event: RetryWait) -> None:
        """One line per failed submit or receipt poll the run repeats after a delay."""
        bound = f"{event.attempt} of {event.max_attempts}"
        failed, then = {
            "submit": (f"submit attempt {bound} never reached the receiver",
                       f"attempt {event.attempt + 1}"),
            "replay": (f"submit attempt {bound} did not complete",
                       f"same-key replay (attempt {event.attempt + 1})"),
            "poll_receipt": (f"receipt poll failed ({bound} in a row)", "next poll"),
        }[event.action]
        at = event.next_attempt_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        with self._lock:
            self._progress.note(f"  {self._child(event.ordinal)} {failed} ({event.reason}); {then} "
                                f"at {at} (in {event.delay_s:.1f} s)")

    def close(self) -> None:
        self._progress.close()

    def _child(self, ordinal: int) -> str:
        return f"child {ordinal}/{self._total} {self._scopes.get(ordinal, '')}".rstrip()


def lease_wait_line(operation_id: str, who: str, until: str, left_s: int) -> None:
    """The progress line of a command waiting for a lost run's lease to expire."""
    click.echo(f"waiting for the lease of {who} on {operation_id} to expire at {until} "
               f"(journal clock, {left_s} s): its run is gone or still working", err=True)


SLOW_FIRST_S: Final = 5.0
"""Seconds a request may wait for its answer before a progress line says so."""
SLOW_EVERY_S: Final = 10.0


class LazyTransport:
    """The plan's transport, built (and its credential resolved) on the first request, once
    even when children in flight at once send their first requests together.

    A request still waiting for its answer after :data:`SLOW_FIRST_S` seconds prints a
    progress line on stderr (then every :data:`SLOW_EVERY_S`) naming the request and the bound
    that will end the wait, so a slow receiver is never a silent pause."""

    def __init__(self, build: Callable[[], RestTransportPort], *,
                 read_timeout_s: float | None = None,
                 note: Callable[[str], None] | None = None) -> None:
        self._build = build
        self._inner: RestTransportPort | None = None
        self._lock = threading.Lock()
        self._read_timeout_s = read_timeout_s
        self._note = note or (lambda line: click.echo(line, err=True))

    def send(self, request: OutboundRequest) -> TransportOutcome:
        with self._lock:
            if self._inner is None:
                self._inner = self._build()
            inner = self._inner
        answered = threading.Event()
        waiter = threading.Thread(target=self._announce, args=(request, answered), daemon=True,
                                  name="dpone-slow-request")
        waiter.start()
        try:
            return inner.send(request)
        finally:
            answered.set()

    def _announce(self, request: OutboundRequest, answered: threading.Event) -> None:
        waited, interval = 0.0, SLOW_FIRST_S
        bound = (f"; the read timeout ends it after {self._read_timeout_s:g} s"
                 if self._read_timeout_s else "")
        while not answered.wait(interval):
            waited += interval
            self._note(f"  waiting for the receiver's answer to {request.method} "
                       f"{request.path} ({waited:g} s so far{bound})")
            interval = SLOW_EVERY_S

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()


@contextlib.contextmanager
def delivery_ports(plan: RestDeliveryPlan, journal_url: str, store: ImmutableArtifactPort, *,
                   environment_id: str, announce: str, credential: Credential | None = None,
                   on_open: Callable[[Journal], None] | None = None
                   ) -> Iterator[tuple[DeliveryJournalPort, SupervisorJournal, LazyTransport,
                                       ImmutableArtifactPort]]:
    """The journal (migrated), the journal the run drives (the same one, or the cutting one
    under a test cut), the plan's transport and ``store`` for one run; the journal and the
    transport are closed after it.

    The journal is scoped to the plan's operation namespace: another namespace's operation is
    refused. ``credential``, when the caller resolved it already (`dpone deliver` does, before
    freezing), is the transport's; otherwise it resolves on the first request. ``on_open`` is
    called with the opened journal before anything else (the store pairing). ``announce`` is
    printed on stderr with the receiver authority and profile.
    """
    tier = plan.environment.snapshot.tier
    cut: CutHook | None = hook_from(os.environ, cut_points())
    with contextlib.ExitStack() as stack:
        opened = open_identified_journal(
            journal_url, environment_id=environment_id, tier=tier,
            operation_namespace=plan.environment.operation_namespace)
        stack.callback(close_quietly, opened)
        if on_open is not None:
            on_open(opened)
        run_journal: SupervisorJournal = opened
        transport = LazyTransport(lambda: transport_for(plan, credential, cut=cut),
                                  read_timeout_s=plan.profile.snapshot.timeouts.read_s)
        stack.callback(transport.close)
        if cut is not None:
            run_journal = cutting = CuttingJournal(opened, cut)
            store = CuttingArtifacts(store, cutting, cut)
        click.echo(f"{announce} to {plan.binding.snapshot.authority} "
                   f"({plan.profile.snapshot.ref})", err=True)
        yield opened, run_journal, transport, store
