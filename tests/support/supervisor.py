"""The supervisor without a socket: a sealed example, a temporary SQLite journal and a scripted
receiver behind ``httpx.MockTransport``.

Import as ``support.supervisor`` (``tests/`` is on ``sys.path``). A
:class:`Supervised` holds one sealed example workload (either family), its own artifact store and
journal under ``tmp_path``, and the real :class:`~dpone.executor.transport.HttpTransport` whose
network is a :class:`ScriptedReceiver`: each submit or poll is answered by the next scripted reply
(:func:`reply`, :func:`refuse`, :func:`drop`, :meth:`ScriptedReceiver.job`), or, when none is
left, the way the example profiles' receiver answers (every row accepted, every job complete).
``run()`` calls :func:`~dpone.executor.supervisor.deliver` with a recording ``sleep`` and a
:class:`FixedJitter` random source, so every back-off delay is known and no test waits.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import httpx

from dpone.artifacts import LocalArtifactStore
from dpone.contracts.journal import ChildOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.supervisor import DeliveryResult, RetryWait, deliver
from dpone.executor.transport import Credential, HttpTransport, Secret, TransportTimeouts
from dpone.journal.sqlite import SqliteJournal

SHORT: Final = (dt.date(2026, 8, 1), dt.date(2026, 8, 7))
"""The sealed interval: the sync example has 1 child (520 rows), the async example 2 (190, 330)."""
WORKLOADS: Final = {"sync": "measurements_sync", "async": "measurements_async"}
HOLDER: Final = "supervisor-unit"
TOKEN: Final = "tok-supervisor-unit-never-echoed"
_FILENAME: Final = re.compile(rb'filename="([^"]+)"')

Reply = Callable[[httpx.Request], httpx.Response]
"""One scripted answer: returns the response, or raises an httpx transport error."""


class WorkerLost(Exception):
    """Raised from the step observer: the worker stops right after a journal step."""


class FixedJitter(random.Random):
    """A random source whose every draw is ``fraction``: a full-jitter delay is exactly
    ``fraction`` of its ceiling ``min(max_delay, initial * 2**attempt)``."""

    def __init__(self, fraction: float) -> None:
        super().__init__(0)
        self.fraction = fraction

    def random(self) -> float:
        return self.fraction


def reply(status: int, body: object = None, **headers: str) -> Reply:
    """Answer ``status`` with ``body`` as JSON (headers: ``retry_after="7"`` is Retry-After)."""
    names = {name.replace("_", "-").title(): value for name, value in headers.items()}

    def answer(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body, headers=names)

    return answer


def refuse(request: httpx.Request) -> httpx.Response:
    """The connection is refused: the request provably never started."""
    raise httpx.ConnectError("connection refused", request=request)


def drop(request: httpx.Request) -> httpx.Response:
    """The answer never comes after the request was written: it may have reached the receiver."""
    raise httpx.ReadTimeout("timed out reading the response", request=request)


class ScriptedReceiver:
    """The receiver behind ``httpx.MockTransport``: scripted replies first, then the examples'
    receiver (a sync batch accepts every row; a job is accepted, then complete with every row)."""

    def __init__(self, family: str, topology: SealedTopology) -> None:
        self.family = family
        self.submits: list[Reply] = []
        self.polls: list[Reply] = []
        self.requests: list[httpx.Request] = []
        self.jobs: dict[str, str] = {}
        """job id -> the multipart filename it was submitted with."""
        self.rows = {(c.request.filename or c.identities.delivery_key): c.descriptor.row_count
                     for c in topology.children}
        """Sealed rows by the key the receiver sees: the X-Delivery-Key or the job file name."""

    def handle(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        if request.method == "POST":
            return (self.submits.pop(0) if self.submits else self.accept)(request)
        return (self.polls.pop(0) if self.polls else self.job("complete"))(request)

    def count(self, method: str) -> int:
        return sum(1 for request in self.requests if request.method == method)

    def accept(self, request: httpx.Request) -> httpx.Response:
        """The examples' receiver: a batch accepts every row; a job is accepted with an id."""
        if self.family == "sync":
            rows = self.rows[request.headers["X-Delivery-Key"]]
            return httpx.Response(200, json={"batch_id": f"b-{self.count('POST')}",
                                             "accepted_rows": rows, "rejected_rows": 0})
        job_id = f"job-{self.count('POST'):06d}"
        self.jobs[job_id] = self.filename(request)
        return httpx.Response(202, json={"job_id": job_id})

    def job(self, phase: str, *, accepted: int | Literal["all"] | None = "all",
            rejected: int | None = 0, filename: str | None = None) -> Reply:
        """A job status answer naming the polled job and echoing its filename (or ``filename``).
        A finished job carries ``rows_accepted`` (``"all"``: every sealed row of the job) and
        ``rows_rejected``; None leaves that counter out."""

        def answer(request: httpx.Request) -> httpx.Response:
            job_id = request.url.path.rsplit("/", 1)[-1]
            echoed = filename if filename is not None else self.jobs[job_id]
            body: dict[str, Any] = {"job_id": job_id, "filename": echoed, "phase": phase}
            counters = {"rows_accepted": self.rows[self.jobs[job_id]] if accepted == "all"
                        else accepted, "rows_rejected": rejected}
            if phase not in ("pending", "running"):
                body.update({name: value for name, value in counters.items() if value is not None})
            return httpx.Response(200, json=body)

        return answer

    @staticmethod
    def filename(request: httpx.Request) -> str:
        found = _FILENAME.search(request.content)
        assert found is not None, "a job submit carries its payload file name"
        return found.group(1).decode()


def fast_polling(plan: RestDeliveryPlan) -> RestDeliveryPlan:
    """``plan`` with a receipt poll interval of 0 seconds (a due time the journal meets at once)."""
    return with_profile(plan, timeouts={"poll_interval_s": 0})


def with_profile(plan: RestDeliveryPlan, **sections: dict[str, Any]) -> RestDeliveryPlan:
    """``plan`` whose profile has the given fields of its sections replaced, e.g.
    ``with_profile(plan, timeouts={"poll_interval_s": 0})``; ``retry`` takes per-loop updates:
    ``retry={"submit": {"budget_s": 0}}``."""
    profile = plan.profile.snapshot
    updates: dict[str, Any] = {}
    for name, fields in sections.items():
        section = getattr(profile, name)
        if name == "retry":
            loops = {loop: getattr(section, loop).model_copy(update=changed)
                     for loop, changed in fields.items()}
            updates[name] = section.model_copy(update=loops)
        else:
            updates[name] = section.model_copy(update=fields)
    snapshot = profile.model_copy(update=updates)
    return plan.model_copy(update={"profile": plan.profile.model_copy(update={"snapshot": snapshot})})


def uncertified(plan: RestDeliveryPlan) -> RestDeliveryPlan:
    """``plan`` whose receiver fence is not certified here: nothing that may have reached the
    receiver is replayed."""
    fence = plan.fence.model_copy(update={"certified_in_environment": False})
    return plan.model_copy(update={"fence": fence})


def mock_transport(plan: RestDeliveryPlan, receiver: ScriptedReceiver) -> HttpTransport:
    """The real transport of ``plan``'s binding with ``receiver`` in place of the network."""
    credential = Credential("bearer", {"token": Secret(TOKEN)})
    return HttpTransport(plan.binding.snapshot, credential,
                         timeouts=TransportTimeouts(connect=2, read=10, write=10, pool=2, total=20),
                         transport=httpx.MockTransport(receiver.handle))


@dataclass
class Supervised:
    """One sealed example with its own store, SQLite journal and scripted receiver."""

    family: str
    plan: RestDeliveryPlan
    topology: SealedTopology
    store: LocalArtifactStore
    journal: SqliteJournal
    receiver: ScriptedReceiver
    transport: HttpTransport
    steps: list[tuple[int, str]] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)
    waits: list[RetryWait] = field(default_factory=list)

    def run(self, *, jitter: float = 0.5, wait: bool = True, stop_after: str | None = None,
            sleep: Callable[[float], None] | None = None) -> DeliveryResult:
        """One ``deliver()`` call. Every journal step is recorded in ``steps``, every pause in
        ``sleeps`` (nothing waits unless ``sleep`` does), every announced retry in ``waits``;
        ``stop_after`` raises :class:`WorkerLost` right after that step (or ``enter_submitting``)."""

        def observe(operation: ChildOperation, transition_id: str) -> None:
            self.steps.append((operation.ordinal, transition_id))
            if transition_id == stop_after:
                raise WorkerLost(transition_id)

        def pause(seconds: float) -> None:
            self.sleeps.append(seconds)
            if sleep is not None:
                sleep(seconds)

        return deliver(self.plan, self.topology, self.journal, self.store, self.transport,
                       holder=HOLDER, wait=wait, sleep=pause, rng=FixedJitter(jitter),
                       observer=observe, on_wait=self.waits.append)

    def children(self) -> list[ChildOperation]:
        parent = self.journal.list_deliveries(1)[0]
        return sorted(self.journal.load_parent(parent.parent_id).children,
                      key=lambda child: child.ordinal)

    def child(self, ordinal: int) -> ChildOperation:
        return self.children()[ordinal - 1]

    def outcomes(self, ordinal: int) -> list[tuple[int, str | None]]:
        """(attempt ordinal, recorded outcome) of every attempt of one child."""
        attempts = self.journal.list_attempts(self.child(ordinal).operation_id)
        return [(int(a["attempt_ordinal"]), a["outcome"]) for a in attempts]

    def evidence(self, ordinal: int, name: str) -> dict[str, Any]:
        """A published evidence document of the child's current attempt."""
        child = self.child(ordinal)
        key = f"evidence/{child.operation_id}/attempt-{child.attempt_ordinal}/{name}.json"
        document = json.loads(self.store.get_bytes(key))
        assert isinstance(document, dict)
        return document
