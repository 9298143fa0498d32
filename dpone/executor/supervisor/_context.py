"""What one supervised delivery shares: its plan and family, its ports, clock and results.

A :class:`Run` is frozen. Every journal change goes through its writer (``run.writer``,
:mod:`._journal_writer`); every stop goes through :meth:`Run.blocked`, which keeps only bounded
scalars as evidence, names the operator's allowed next actions and shuts the run's
:class:`SendGate`: once any child's effect may be unknown, no new request starts. Requests
already in flight finish and are recorded (a certified same-key replay is how such a request
finishes, so it is admitted); a child about to send its first request records that the attempt
never started and waits in RETRY_WAIT for the next run.
"""

from __future__ import annotations

import datetime as dt
import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal
from urllib.parse import urlsplit

from dpone.contracts import RemoteEffect, StrictModel, canonical_json
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import ChildOperation, SupervisorJournal
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import Clock, ImmutableArtifactPort, RestTransportPort
from dpone.contracts.rate import RateScope
from dpone.contracts.transport import Failure, Response
from dpone.executor.clock import SleepingWith, SystemClock
from dpone.executor.supervisor._actions import ACTIONS
from dpone.executor.supervisor._decide import Family, family_of
from dpone.executor.supervisor._journal_writer import JournalWriter, StepObserver
from dpone.executor.supervisor._results import DeliveryBlocked
from dpone.executor.supervisor._telemetry import Telemetry
from dpone.executor.transport import origin_of

DUE_MARGIN_S: Final = 0.05
MAX_REASON_CHARS: Final = 160


class RetryWait(StrictModel):
    """A failed submit or receipt poll that this run repeats after ``delay_s``.

    Told to the :data:`WaitObserver` before the run sleeps (a progress display, not journal
    state): ``attempt`` is the failed submit attempt or the count of consecutive failed polls,
    ``max_attempts`` the profile's bound for that loop, ``reason`` a bounded description of the
    failure (a transport failure class or an HTTP status, never a body or a header).
    """

    operation_id: str
    ordinal: int
    action: Literal["submit", "replay", "poll_receipt"]
    reason: str
    attempt: int
    max_attempts: int
    delay_s: float
    next_attempt_at: dt.datetime


WaitObserver = Callable[[RetryWait], None]


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


@dataclass(frozen=True)
class Run:
    """One delivery run (one holder, one plan): its ports, family and policies, built once by
    :func:`open_run`. Nothing in it changes while the run goes on; the checkpoint frontier is
    the driver's (``_deliver.Frontier``), the send gate is thread-safe."""

    plan: RestDeliveryPlan
    family: Family
    writer: JournalWriter
    """The run's one journal writer (every lease, attempt, transition, turn and promotion)."""
    artifacts: ImmutableArtifactPort
    transport: RestTransportPort
    clock: Clock
    """The worker's clocks: the submit and observation budgets, reported wall times, sleeps."""
    rng: random.Random
    scope: RateScope
    """The receiver account the run sends to (its shared rate limits)."""
    telemetry: Telemetry
    """Metrics, log events and spans of the run (told after each step; never decides)."""
    on_wait: WaitObserver | None = None
    gate: SendGate = field(default_factory=SendGate)
    """Shut at the first stop: no new request of this run starts after it."""

    def retrying(self, operation: ChildOperation, action: Literal["submit", "replay", "poll_receipt"],
                 outcome: Response | Failure | int, attempt: int, delay_s: float) -> None:
        """Tell the wait observer that ``operation``'s ``action`` failed (``outcome``: the
        response, the transport failure or an HTTP status) and is repeated in ``delay_s``."""
        self.telemetry.retrying(action, outcome)
        if self.on_wait is None:
            return
        retry = self.plan.profile.snapshot.retry
        bound = retry.observation if action == "poll_receipt" else retry.submit
        self.on_wait(RetryWait(
            operation_id=operation.operation_id, ordinal=operation.ordinal, action=action,
            reason=failure_reason(outcome), attempt=attempt, max_attempts=bound.max_attempts,
            delay_s=round(delay_s, 3),
            next_attempt_at=self.clock.now() + dt.timedelta(seconds=delay_s)))

    def back_off(self, operation: ChildOperation,
                 action: Literal["submit", "replay", "poll_receipt"],
                 outcome: Response | Failure | int, attempt: int, delay_s: float) -> None:
        """:meth:`retrying`, then sleep ``delay_s``."""
        self.retrying(operation, action, outcome, attempt, delay_s)
        self.clock.sleep(delay_s)

    def publish_evidence(self, operation: ChildOperation, name: str,
                         document: Mapping[str, object]) -> str:
        """Publish bounded evidence create-if-absent; returns its digest."""
        key = f"evidence/{operation.operation_id}/attempt-{operation.attempt_ordinal}/{name}.json"
        return self.artifacts.put_bytes(key, canonical_json(dict(document))).digest

    # --- the journal clock (due times); the worker's is ``clock`` ---------------------------------

    def now(self) -> dt.datetime:
        """The journal's (database) clock."""
        return self.writer.now()

    def due_in(self, due: dt.datetime | None) -> float:
        """Seconds until ``due`` by the journal clock (0 when due or unset)."""
        if due is None:
            return 0.0
        return max((due - self.now()).total_seconds(), 0.0)

    def wait_until(self, due: dt.datetime | None) -> None:
        """Sleep until ``due`` has passed by the journal clock."""
        self.pause(self.due_in(due))

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds`` (from :meth:`due_in`) plus a margin past the due time; 0 is no-op."""
        if seconds > 0:
            self.clock.sleep(seconds + DUE_MARGIN_S)

    # --- results ------------------------------------------------------------------------------

    def blocked(self, operation: ChildOperation, code: str, failure: Failure | None = None,
                extra: Mapping[str, str | int] | None = None) -> DeliveryBlocked:
        """The stop result for ``operation``: bounded scalars only, and the allowed actions.

        Shuts the send gate: no new request of this run starts after a stop."""
        self.gate.shut(operation.operation_id)
        evidence: dict[str, str | int] = {
            "state_name": operation.state_name, "revision": operation.revision,
            "attempt_ordinal": operation.attempt_ordinal, "ordinal": operation.ordinal,
            "delivery_key": operation.delivery_key}
        if failure is not None:
            evidence.update({"transport_phase": failure.phase.value,
                             "transport_failure": failure.kind.value})
        evidence.update(scalars(operation.receipt or {}))
        evidence.update(extra or {})
        return DeliveryBlocked(code=code, parent_id=operation.parent_id,
                               operation_id=operation.operation_id,
                               remote_effect=RemoteEffect(operation.axes.remote_effect),
                               evidence=evidence,
                               allowed_actions=ACTIONS.get(code, ("inspect_evidence",)),
                               checkpoint_frontier=0)  # the driver's frontier, set by it


def open_run(plan: RestDeliveryPlan, journal: SupervisorJournal,
             artifacts: ImmutableArtifactPort, transport: RestTransportPort, *, holder: str,
             clock: Clock | None = None, sleep: Callable[[float], None] | None = None,
             rng: random.Random | None = None, observer: StepObserver | None = None,
             on_wait: WaitObserver | None = None, leases: LeasePolicy | None = None) -> Run:
    """The run of ``plan`` (``profile.unsupported_family`` before anything when the supervisor
    cannot drive its profile)."""
    family = family_of(plan.profile.snapshot)
    telemetry = Telemetry(profile=plan.profile.snapshot.id, family=family.name,
                          environment=plan.environment.ref)
    return Run(plan, family,
               JournalWriter(journal, holder, leases or LeasePolicy(), observer, telemetry),
               artifacts, transport, run_clock(clock, sleep), rng or random.Random(),
               rate_scope(plan), telemetry, on_wait)


def rate_scope(plan: RestDeliveryPlan) -> RateScope:
    """The receiver account the plan sends to: canonical origin (lower-case scheme and host,
    explicit port) and remote principal."""
    binding = plan.binding.snapshot
    parts = urlsplit(binding.authority)
    return RateScope(authority=origin_of(parts.scheme, parts.hostname or "", parts.port),
                     principal=binding.remote_principal_id)


def run_clock(clock: Clock | None, sleep: Callable[[float], None] | None) -> Clock:
    """The clock of a run: ``clock`` (the system clock when None), sleeping with ``sleep`` when
    a caller passes one (a test's recorder, or no wait at all)."""
    base = clock if clock is not None else SystemClock()
    return base if sleep is None else SleepingWith(base, sleep)


def failure_reason(outcome: Response | Failure | int) -> str:
    """A bounded description of a failed exchange: the failure class or the HTTP status."""
    if isinstance(outcome, int):
        return f"HTTP {outcome}"
    if isinstance(outcome, Response):
        return f"HTTP {outcome.status}"
    reason = f"{outcome.kind.value}: {outcome.detail}"
    return reason if len(reason) <= MAX_REASON_CHARS else reason[:MAX_REASON_CHARS - 1] + "…"


def scalars(values: Mapping[str, object]) -> dict[str, str | int]:
    """The string and integer values of ``values`` (booleans and structures dropped)."""
    return {key: value for key, value in values.items()
            if isinstance(value, str | int) and not isinstance(value, bool)}
