"""Heartbeat renewal of a lease, on every journal adapter (the journal clock decides)."""

from __future__ import annotations

import time

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import DeliveryJournalPort
from support.journal import admission


def _child(journal: DeliveryJournalPort) -> str:
    return journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id


def test_a_renewal_extends_the_held_lease_and_keeps_its_token(
        journal: DeliveryJournalPort) -> None:
    operation_id = _child(journal)
    held = journal.acquire_lease(operation_id, "mutation", "worker-1", 2)
    renewed = journal.renew_lease(held, 600)
    assert (renewed.holder, renewed.token, renewed.kind) == (held.holder, held.token, held.kind)
    assert renewed.expires_at > held.expires_at
    time.sleep(2.2)  # past the first expiry: only the renewal keeps it
    with pytest.raises(DponeError) as refused:
        journal.acquire_lease(operation_id, "mutation", "worker-2", 60)
    assert refused.value.code == "journal.lease_held"
    journal.plan_attempt(operation_id, renewed)  # still authority for the holder


def test_an_expired_lease_cannot_be_renewed(journal: DeliveryJournalPort) -> None:
    operation_id = _child(journal)
    held = journal.acquire_lease(operation_id, "observation", "worker-1", 1)
    time.sleep(1.2)
    with pytest.raises(DponeError) as lost:
        journal.renew_lease(held, 600)
    assert lost.value.code == "journal.lease_lost"


def test_a_lease_taken_over_cannot_be_renewed_by_its_old_holder(
        journal: DeliveryJournalPort) -> None:
    operation_id = _child(journal)
    old = journal.acquire_lease(operation_id, "mutation", "worker-1", 1)
    time.sleep(1.2)
    new = journal.acquire_lease(operation_id, "mutation", "worker-2", 600)
    with pytest.raises(DponeError) as lost:
        journal.renew_lease(old, 600)
    assert lost.value.code == "journal.lease_lost"
    assert journal.renew_lease(new, 600).token == new.token


def test_a_released_lease_cannot_be_renewed(journal: DeliveryJournalPort) -> None:
    operation_id = _child(journal)
    held = journal.acquire_lease(operation_id, "checkpoint", "worker-1", 600)
    journal.release_lease(held)
    with pytest.raises(DponeError) as lost:
        journal.renew_lease(held, 600)
    assert lost.value.code == "journal.lease_lost"


@pytest.mark.parametrize("ttl", [0, -1, 86_401])
def test_a_renewal_ttl_out_of_range_is_refused(journal: DeliveryJournalPort, ttl: int) -> None:
    held = journal.acquire_lease(_child(journal), "mutation", "worker-1", 60)
    with pytest.raises(DponeError) as refused:
        journal.renew_lease(held, ttl)
    assert refused.value.code == "journal.illegal_transition"
