"""The receiver account's shared rate limits in the journal, on both dialects.

Turns of one (authority, principal, kind) are spaced one interval apart by the database clock
whoever takes them; a turn beyond the caller's budget takes nothing; submit and poll buckets and
other accounts are independent. Active-request slots are bounded by ``max_active``, released
with the mutation lease they were taken under (released or expired: a killed process's slot
frees itself), and a child taking a turn again reuses the slot it still holds.
"""

from __future__ import annotations

import datetime as dt
import itertools
import time

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import DeliveryJournalPort, Lease
from dpone.contracts.rate import ActiveClaim, RateScope, RateTurn, RateTurnRequest
from support.journal import admission

SCOPE = RateScope(authority="https://receiver.example:443", principal="principal-a")
PER_MINUTE = 60  # one turn a second
HOLD_S = 120.0


def _turn(journal: DeliveryJournalPort, *, kind: str = "submit", scope: RateScope = SCOPE,
          max_wait_s: float = 600.0, lease: Lease | None = None, max_active: int = 1,
          per_minute: int = PER_MINUTE) -> RateTurn:
    active = None if lease is None else ActiveClaim(
        max_active=max_active, holder=lease.holder, operation_id=lease.operation_id,
        lease_token=lease.token, hold_s=HOLD_S)
    return journal.take_rate_turn(RateTurnRequest(
        scope=scope, kind=kind, per_minute=per_minute,  # type: ignore[arg-type]
        max_wait_s=max_wait_s, active=active))


def _leases(journal: DeliveryJournalPort, count: int, ttl_s: int = 60) -> list[Lease]:
    children = journal.admit_parent(admission([(i, i + 1) for i in range(count)])).parent.children
    return [journal.acquire_lease(child.operation_id, "mutation", f"worker-{i}", ttl_s)
            for i, child in enumerate(children)]


def test_turns_of_one_account_are_one_interval_apart_by_the_database_clock(
        journal: DeliveryJournalPort) -> None:
    before = journal.now()
    turns = [_turn(journal) for _ in range(4)]
    assert [turn.outcome for turn in turns] == ["granted"] * 4
    first = turns[0].turn_at
    assert first >= before - dt.timedelta(milliseconds=2)
    gaps = [(later.turn_at - earlier.turn_at).total_seconds()
            for earlier, later in itertools.pairwise(turns)]
    assert gaps == pytest.approx([60 / PER_MINUTE] * 3, abs=1e-3)
    # Each wait is its turn's distance from the database clock when it was taken.
    assert turns[3].wait_s == pytest.approx(3.0, abs=0.5)
    assert turns[3].wait_s > turns[2].wait_s > turns[1].wait_s


def test_a_turn_beyond_the_budget_takes_nothing(journal: DeliveryJournalPort) -> None:
    first = _turn(journal)
    refused = _turn(journal, max_wait_s=0.2)
    assert refused.outcome == "beyond_budget" and refused.slot is None
    assert refused.wait_s == pytest.approx(1.0, abs=0.2)
    again = _turn(journal)
    assert again.outcome == "granted"
    assert (again.turn_at - first.turn_at).total_seconds() == pytest.approx(1.0, abs=1e-3)


def test_submit_and_poll_buckets_and_other_accounts_are_independent(
        journal: DeliveryJournalPort) -> None:
    submit = _turn(journal)
    poll = _turn(journal, kind="poll")
    other = _turn(journal, scope=SCOPE.model_copy(update={"principal": "principal-b"}))
    port = _turn(journal, scope=SCOPE.model_copy(
        update={"authority": "https://receiver.example:8443"}))
    assert all(turn.outcome == "granted" and turn.wait_s < 0.5
               for turn in (submit, poll, other, port))


def test_active_requests_never_exceed_max_active(journal: DeliveryJournalPort) -> None:
    first, second, third = _leases(journal, 3)
    a = _turn(journal, lease=first, max_active=2, per_minute=60_000)
    b = _turn(journal, lease=second, max_active=2, per_minute=60_000)
    c = _turn(journal, lease=third, max_active=2, per_minute=60_000)
    assert (a.outcome, b.outcome, c.outcome) == ("granted", "granted", "slots_busy")
    assert a.slot is not None and b.slot is not None
    assert {a.slot.slot, b.slot.slot} == {1, 2}
    assert c.slot is None
    journal.release_active_slot(a.slot)
    assert _turn(journal, lease=third, max_active=2, per_minute=60_000).outcome == "granted"


def test_a_slot_ends_with_its_mutation_lease(journal: DeliveryJournalPort) -> None:
    """Released with the lease (the end of a submit), or when it expires (a killed process)."""
    first, second, third = _leases(journal, 3, ttl_s=1)
    assert _turn(journal, lease=first, per_minute=60_000).outcome == "granted"
    assert _turn(journal, lease=second, per_minute=60_000).outcome == "slots_busy"
    journal.release_lease(first)
    assert _turn(journal, lease=second, per_minute=60_000).outcome == "granted"
    assert _turn(journal, lease=third, per_minute=60_000).outcome == "slots_busy"
    # The holder of ``second`` is killed: nobody releases or renews its lease.
    while journal.now() <= second.expires_at:
        time.sleep(0.1)
    assert _turn(journal, lease=third, per_minute=60_000).outcome == "granted"


def test_a_child_taking_a_turn_again_keeps_its_own_slot(journal: DeliveryJournalPort) -> None:
    first, second = _leases(journal, 2)
    held = _turn(journal, lease=first, max_active=2, per_minute=60_000)
    again = _turn(journal, lease=first, max_active=2, per_minute=60_000)
    assert held.slot is not None and again.slot is not None
    assert again.slot.slot == held.slot.slot and again.slot.token == held.slot.token + 1
    assert _turn(journal, lease=second, max_active=2, per_minute=60_000).outcome == "granted"


def _begin_request(operation_id: str, holder: str) -> RateTurnRequest:
    return RateTurnRequest(scope=SCOPE, kind="submit", per_minute=PER_MINUTE, max_wait_s=600.0,
                           active=ActiveClaim(max_active=1, holder=holder,
                                              operation_id=operation_id, hold_s=HOLD_S))


def test_begin_attempt_takes_the_first_turn_and_slot_on_the_lease_it_takes(
        journal: DeliveryJournalPort) -> None:
    """The first attempt's turn rides in the transaction that takes the mutation lease: the slot
    is claimed on that lease, and is freed when it is released."""
    children = journal.admit_parent(admission([(0, 1), (1, 2)])).parent.children
    first, second = (child.operation_id for child in children)
    begun = journal.begin_attempt(first, "worker-1", 60, rate=_begin_request(first, "worker-1"))
    assert begun.attempt is not None and begun.turn is not None
    assert begun.turn.outcome == "granted" and begun.turn.slot is not None
    other = journal.begin_attempt(second, "worker-2", 60,
                                  rate=_begin_request(second, "worker-2"))
    assert other.turn is not None and other.turn.outcome == "slots_busy"  # max_active 1
    journal.release_lease(begun.lease)  # the slot goes with its lease
    again = _turn(journal, lease=other.lease)
    assert again.outcome == "granted"


def test_begin_attempt_refuses_a_slot_claimed_for_another_holder(
        journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 1)])).parent.children[0].operation_id
    with pytest.raises(DponeError) as refused:
        journal.begin_attempt(operation_id, "worker-1", 60,
                              rate=_begin_request(operation_id, "worker-2"))
    assert refused.value.code == "journal.illegal_transition"
    # Nothing was kept: the lease is free and the turn untaken.
    assert journal.acquire_lease(operation_id, "mutation", "worker-3", 60).holder == "worker-3"
    assert _turn(journal).wait_s == pytest.approx(0.0, abs=0.5)
