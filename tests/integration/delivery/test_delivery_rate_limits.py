"""The profile's rate limits hold across processes: four ``deliver()`` processes, one journal,
one receiver account, on both journals.

Four spawned processes, released together by one barrier, each deliver their own sealed
interval of the example synchronous workload through the real transport to one loopback
receiver that stamps every submit (:class:`~support.rate_worker.StampingReceiver`). They share
nothing but the journal (a SQLite file or a PostgreSQL schema):

* ``submit_per_minute`` (one turn every 60/N seconds by the journal's database clock): the k-th
  submit the receiver sees arrives no earlier than the database clock before the start plus k
  intervals (arrival follows the turn on the same host clock), and any two arrivals j > i are at
  least (j - i) intervals apart, less the time from a turn to its arrival (``TURN_TO_ARRIVAL_S``:
  marker, SUBMITTING commit, connection);
* ``max_active_requests: 1``: the receiver, holding each request ``HOLD_S``, never has two in
  flight, although each process would send at once.

Without the shared control both fail: the four processes submit together. ``poll_per_minute``
takes its turns from its own bucket of the same journal: receipt polls of asynchronous jobs
(poll interval 0, jobs running ``JOB_S``) are one poll interval apart instead of back to back.
"""

from __future__ import annotations

import datetime as dt
import itertools
import time
from pathlib import Path
from typing import Final

import pytest

from dpone.contracts.journal import DeliveryJournalPort
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.supervisor import DeliveryCompleted
from dpone.executor.transport import OutboundRequest, RestTransportPort, TransportOutcome
from dpone.receiver import ReceiverConfig, ReceiverThread
from support.delivery import TOKEN, HarnessFactory, seal
from support.rate_worker import Delivery, StampingReceiver, deliver_in_processes, write_delivery

PROCESSES: Final = 4
INTERVALS: Final = ((dt.date(2026, 8, 1), dt.date(2026, 8, 9)),
                    (dt.date(2026, 8, 9), dt.date(2026, 8, 17)),
                    (dt.date(2026, 8, 17), dt.date(2026, 8, 25)),
                    (dt.date(2026, 8, 25), dt.date(2026, 9, 1)))
"""Four disjoint intervals of the example data, one delivery (1-2 children) per process."""
SUBMIT_PER_MINUTE: Final = 30
INTERVAL_S: Final = 60 / SUBMIT_PER_MINUTE
TURN_TO_ARRIVAL_S: Final = 1.0
"""At most this long from a submit's turn to its arrival at the receiver (half an interval)."""
CLOCK_RESOLUTION_S: Final = 0.005
"""SQLite's clock has millisecond resolution."""
HOLD_S: Final = 0.4
POLL_PER_MINUTE: Final = 60
JOB_S: Final = 3.0
SEND_AFTER_TURN_S: Final = 0.5
"""At most this long from a poll's turn to its request (one lease, in this process)."""


def _limited(plan: RestDeliveryPlan, authority: str, *, submit_per_minute: int,
             max_active_requests: int) -> RestDeliveryPlan:
    snapshot = plan.profile.snapshot
    # Four remote-job slots: the deliveries share one effect domain, and only the rate limits
    # under test may hold a process back.
    rate = snapshot.rate.model_copy(update={"submit_per_minute": submit_per_minute,
                                            "max_active_requests": max_active_requests,
                                            "max_active_remote_jobs": PROCESSES})
    profile = plan.profile.model_copy(update={"snapshot": snapshot.model_copy(
        update={"rate": rate})})
    binding = plan.binding.model_copy(update={"snapshot": plan.binding.snapshot.model_copy(
        update={"authority": authority})})
    return plan.model_copy(update={"profile": profile, "binding": binding})


def _deliveries(root: Path, authority: str, **rate: int) -> tuple[list[Delivery], int]:
    """The four sealed deliveries and their total child count."""
    deliveries, children = [], 0
    for index, interval in enumerate(INTERVALS):
        where = root / f"delivery-{index}"
        sealed = seal("sync", where / "artifacts", interval)
        children += len(sealed.topology.children)
        plan = _limited(sealed.plan, authority, **rate)
        deliveries.append(write_delivery(where, plan, sealed.topology, where / "artifacts"))
    return deliveries, children


def _location(dialect: str, journal_location: tuple[str, str]) -> str:
    where, _schema = journal_location
    return str(Path(where) / "journal.sqlite3") if dialect == "sqlite" else where


def test_submits_of_four_processes_keep_the_shared_submit_rate(
        tmp_path: Path, dialect: str, journal_location: tuple[str, str],
        journal: DeliveryJournalPort) -> None:
    with StampingReceiver() as receiver:
        deliveries, children = _deliveries(tmp_path, receiver.base_url,
                                           submit_per_minute=SUBMIT_PER_MINUTE,
                                           max_active_requests=4)
        started = journal.now().timestamp()  # the database clock, before any turn
        outcomes = deliver_in_processes(dialect, _location(dialect, journal_location),
                                        deliveries, receiver.base_url)
        arrivals = receiver.arrivals()
    assert [outcome[1] for outcome in outcomes] == ["completed"] * PROCESSES, outcomes
    assert len(arrivals) == children >= PROCESSES + 2
    for k, arrived in enumerate(arrivals):
        assert arrived >= started + k * INTERVAL_S - CLOCK_RESOLUTION_S, (k, arrivals)
    for i, earlier in enumerate(arrivals):
        for j in range(i + 1, len(arrivals)):
            assert arrivals[j] - earlier >= (j - i) * INTERVAL_S - TURN_TO_ARRIVAL_S, (
                i, j, arrivals)


def test_four_processes_never_have_more_than_max_active_requests_in_flight(
        tmp_path: Path, dialect: str, journal_location: tuple[str, str],
        journal: DeliveryJournalPort) -> None:
    with StampingReceiver(hold_s=HOLD_S) as receiver:
        deliveries, children = _deliveries(tmp_path, receiver.base_url,
                                           submit_per_minute=60_000, max_active_requests=1)
        outcomes = deliver_in_processes(dialect, _location(dialect, journal_location),
                                        deliveries, receiver.base_url)
        stamps = sorted(receiver.stamps, key=lambda stamp: stamp.arrived)
    assert [outcome[1] for outcome in outcomes] == ["completed"] * PROCESSES, outcomes
    assert len(stamps) == children
    assert receiver.max_in_flight == 1
    for earlier, later in itertools.pairwise(stamps):
        assert later.arrived >= earlier.answered - CLOCK_RESOLUTION_S


class StampedPolls:
    """The real transport; the time of every receipt poll (GET) handed to it."""

    def __init__(self, inner: RestTransportPort) -> None:
        self.inner = inner
        self.polls: list[float] = []

    def send(self, request: OutboundRequest) -> TransportOutcome:
        if request.method == "GET":
            self.polls.append(time.time())
        return self.inner.send(request)

    def close(self) -> None:
        self.inner.close()


def test_receipt_polls_keep_the_shared_poll_rate(harness: HarnessFactory,
                                                 journal: DeliveryJournalPort) -> None:
    with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=JOB_S)) as receiver:
        h = harness("async", receiver=receiver)
        snapshot = h.plan.profile.snapshot
        rate = snapshot.rate.model_copy(update={"poll_per_minute": POLL_PER_MINUTE})
        plan = h.plan.model_copy(update={"profile": h.plan.profile.model_copy(
            update={"snapshot": snapshot.model_copy(update={"rate": rate})})})
        stamped = StampedPolls(h.transport)
        started = journal.now().timestamp()
        result = h.run(plan=plan, transport=stamped, sleep=time.sleep)
    assert isinstance(result, DeliveryCompleted)
    polls, interval = stamped.polls, 60 / POLL_PER_MINUTE
    assert len(polls) >= len(h.topology.children)
    for k, polled in enumerate(polls):
        assert polled >= started + k * interval - CLOCK_RESOLUTION_S, (k, polls)
    for earlier, later in itertools.pairwise(polls):
        assert later - earlier >= interval - SEND_AFTER_TURN_S, polls


@pytest.fixture(autouse=True)
def _journal_migrated(journal: DeliveryJournalPort) -> None:
    """The ``journal`` fixture migrates the shared journal before the processes open it."""
