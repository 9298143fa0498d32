"""Heartbeat-extended leases: a live run keeps its short lease for as long as it works; a
killed one frees its child within one lease TTL by the journal clock, not after the whole
submit budget."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable

import pytest

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import DeliveryJournalPort
from dpone.executor.supervisor import DeliveryCompleted, parent_admission
from dpone.executor.transport import OutboundRequest, RestTransportPort, TransportOutcome
from support.delivery import ENVIRONMENT, HarnessFactory

SHORT_LEASES = LeasePolicy(ttl_s=3, heartbeat_s=1)
OTHER = "another-worker"
ONE_CHILD = {"sync": (dt.date(2026, 8, 1), dt.date(2026, 8, 8)),
             "async": (dt.date(2026, 8, 1), dt.date(2026, 8, 4))}


class _SlowSend:
    """Sends through ``inner`` after holding the request longer than the lease TTL, and
    meanwhile tries to take the sending child's mutation lease as another worker."""

    def __init__(self, inner: RestTransportPort, journal: DeliveryJournalPort,
                 sending: Callable[[], str]) -> None:
        self.inner = inner
        self.journal = journal
        self.sending = sending
        self.refusals: list[str] = []

    def send(self, request: OutboundRequest) -> TransportOutcome:
        if request.method != "POST":  # a receipt poll runs under the observation lease
            return self.inner.send(request)
        time.sleep(SHORT_LEASES.ttl_s + 1.5)
        try:
            taken = self.journal.acquire_lease(self.sending(), "mutation", OTHER, 60)
        except DponeError as error:
            self.refusals.append(error.code)
        else:
            self.journal.release_lease(taken)
            self.refusals.append("taken")
        return self.inner.send(request)

    def close(self) -> None:
        return None


@pytest.mark.parametrize("family", ["sync", "async"])
def test_a_live_run_keeps_its_short_lease_past_the_ttl(harness: HarnessFactory,
                                                       family: str) -> None:
    h = harness(family, ONE_CHILD[family])
    slow = _SlowSend(h.transport, h.journal, lambda: h.child(1).operation_id)
    result = h.run(transport=slow, leases=SHORT_LEASES)
    assert isinstance(result, DeliveryCompleted)
    assert slow.refusals == ["journal.lease_held"], (
        "another worker took the mutation lease of a run that was still sending")
    taken = h.journal.acquire_lease(h.child(1).operation_id, "mutation", OTHER, 60)
    assert taken.token == 2  # released when the attempt ended, not left to expire


_HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from dpone.contracts.binding import LeasePolicy
    from dpone.executor.supervisor import Heartbeat
    dialect, where, environment, operation_id = sys.argv[1:5]
    if dialect == "sqlite":
        from dpone.journal.sqlite import SqliteJournal
        journal = SqliteJournal(Path(where) / "journal.sqlite3", environment_id=environment)
    else:
        from dpone.journal.postgres import PostgresJournal
        journal = PostgresJournal(where, environment_id=environment)
    policy = LeasePolicy(ttl_s=int(sys.argv[5]), heartbeat_s=int(sys.argv[6]))
    lease = journal.acquire_lease(operation_id, "mutation", "doomed-worker", policy.ttl_s)
    Heartbeat(journal, lease, policy).start()
    print("held", flush=True)
    time.sleep(3600)
""")


def test_a_killed_holder_frees_its_child_within_one_ttl(
        harness: HarnessFactory, dialect: str, journal_location: tuple[str, str]) -> None:
    h = harness("sync", ONE_CHILD["sync"])
    h.journal.admit_parent(parent_admission(h.plan, h.topology))
    operation_id = h.child(1).operation_id
    where, _schema = journal_location
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, dialect, where, ENVIRONMENT, operation_id,
         str(SHORT_LEASES.ttl_s), str(SHORT_LEASES.heartbeat_s)],
        stdout=subprocess.PIPE, text=True, env={**os.environ})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        time.sleep(SHORT_LEASES.ttl_s + 1.5)
        with pytest.raises(DponeError) as alive:
            h.journal.acquire_lease(operation_id, "mutation", OTHER, 60)
        assert alive.value.code == "journal.lease_held"  # renewed past its first expiry
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    killed_at = h.journal.now()
    with pytest.raises(DponeError) as held:
        h.journal.acquire_lease(operation_id, "mutation", OTHER, 60)
    expires_at = dt.datetime.fromisoformat(str(held.value.details["expires_at"]))
    # The journal records when recovery may start: within one TTL of the kill (to the second).
    assert expires_at <= killed_at + dt.timedelta(seconds=SHORT_LEASES.ttl_s + 1)
    # expires_at is shown to the second (rounded down): wait for the second after it.
    time.sleep(max((expires_at - h.journal.now()).total_seconds(), 0) + 1.2)
    taken = h.journal.acquire_lease(operation_id, "mutation", OTHER, 60)
    assert taken.holder == OTHER
