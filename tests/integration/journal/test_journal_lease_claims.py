"""Leases held for one transaction (``LeaseClaim``) and the mutation lease taken with its first
attempt planned (``begin_attempt``), on every journal.

* ``begin_attempt`` plans exactly what ``plan_attempt`` plans under the same lease, when the
  child is due now; a retry whose delay has not elapsed by the journal clock gets its lease and
  no plan; a refusal (a live lease of another holder, a BLOCKED gate) keeps no lease;
* a transition or promotion under a claim takes the lease inside its transaction and releases
  it before commit; while another holder's lease is live the claim is refused and nothing is
  recorded.
"""

from __future__ import annotations

import datetime as dt

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import DeliveryJournalPort, LeaseClaim, TransitionRequest
from support.journal import ENVIRONMENT, admission, step, submit, sync_success

VERIFIED_FULL = ("verifying_succeeded_verified_full", "verification", "FULL_EFFECT_VERIFIED",
                 ["verification_recorded", "all_rows_accounted"])


def _claim(operation_id: str, kind: str, holder: str = "verifier") -> LeaseClaim:
    return LeaseClaim(operation_id=operation_id, kind=kind,  # type: ignore[arg-type]
                      holder=holder, ttl_seconds=60)


def test_begin_attempt_plans_what_plan_attempt_plans(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    begun = journal.begin_attempt(operation_id, "worker-1", 60)
    assert (begun.lease.kind, begun.lease.holder) == ("mutation", "worker-1")
    assert begun.attempt is not None
    assert journal.plan_attempt(operation_id, begun.lease) == begun.attempt
    child = journal.get_child(operation_id)
    submitted, _ = submit(journal, operation_id, lease=begun.lease)
    assert (submitted.state_name, submitted.revision) == ("submitting", child.revision + 1)


def test_begin_attempt_plans_no_retry_before_its_delay(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    step(journal, child, "submitting_not_started_retry", "transport", "REQUEST_NOT_STARTED",
         ["request_not_started_proof", "retry_budget_remaining"], lease,
         next_check_after=journal.now() + dt.timedelta(hours=1))
    journal.release_lease(lease)
    later = journal.begin_attempt(operation_id, "worker-2", 60)
    assert later.attempt is None
    assert later.lease.holder == "worker-2"
    assert journal.plan_attempt(operation_id, later.lease).attempt_ordinal == 2


def test_a_refused_begin_attempt_keeps_no_lease(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    held = journal.acquire_lease(operation_id, "mutation", "worker-1", 60)
    with pytest.raises(DponeError) as refused:
        journal.begin_attempt(operation_id, "worker-2", 60)
    assert refused.value.code == "journal.lease_held"
    journal.release_lease(held)
    journal.set_mutation_gate(ENVIRONMENT, "BLOCKED", epoch=0, actor="ops", reason="restore")
    with pytest.raises(DponeError) as blocked:
        journal.begin_attempt(operation_id, "worker-2", 60)
    assert blocked.value.code == "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED"
    assert journal.acquire_lease(operation_id, "mutation", "worker-3", 60).holder == "worker-3"


def test_a_claimed_lease_lives_only_inside_its_transaction(
        journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    operation_id = parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    child = sync_success(journal, child, lease)
    transition_id, kind, name, facts = VERIFIED_FULL
    verified = step(journal, child, transition_id, kind, name, facts,
                    _claim(operation_id, "observation"))  # type: ignore[arg-type]
    assert verified.axes.checkpoint_state == "ELIGIBLE"
    assert journal.acquire_lease(operation_id, "observation", "other", 60).holder == "other"
    assert journal.promote_frontier(parent.parent_id,
                                    _claim(parent.parent_id, "checkpoint")) == 1
    assert journal.acquire_lease(parent.parent_id, "checkpoint", "other", 60).holder == "other"


def test_a_claim_is_refused_while_another_holder_is_live(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    operation_id = parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    child = sync_success(journal, child, lease)
    journal.acquire_lease(operation_id, "observation", "other", 60)
    transition_id, _kind, _name, facts = VERIFIED_FULL
    request = TransitionRequest(operation_id=operation_id, transition_id=transition_id,
                                expected_revision=child.revision, facts=tuple(facts))
    with pytest.raises(DponeError) as held:
        journal.transition(request, _claim(operation_id, "observation"))
    assert held.value.code == "journal.lease_held"
    assert journal.get_child(operation_id) == child
    journal.acquire_lease(parent.parent_id, "checkpoint", "other", 60)
    with pytest.raises(DponeError) as checkpoint:
        journal.promote_frontier(parent.parent_id, _claim(parent.parent_id, "checkpoint"))
    assert checkpoint.value.code == "journal.lease_held"


def test_a_claim_on_an_unknown_operation_keeps_nothing(journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(admission([(0, 10)])).parent
    child = parent.children[0]
    request = TransitionRequest(operation_id="op_unknown", transition_id=VERIFIED_FULL[0],
                                expected_revision=child.revision)
    with pytest.raises(DponeError) as missing:
        journal.transition(request, _claim("op_unknown", "observation"))
    assert missing.value.code == "journal.not_found"
    with pytest.raises(DponeError) as no_parent:
        journal.promote_frontier("parent_unknown", _claim("parent_unknown", "checkpoint"))
    assert no_parent.value.code == "journal.not_found"
    with pytest.raises(DponeError) as no_child:
        journal.begin_attempt("op_unknown", "worker-1", 60)
    assert no_child.value.code == "journal.not_found"


def test_live_leases_of_a_delivery_name_holder_and_expiry_and_skip_other_deliveries(
        journal: DeliveryJournalPort) -> None:
    """What `inspect` shows of a lost run: its unexpired leases on the delivery and its
    children (never another delivery's whose id shares the prefix), soonest expiry first."""
    admitted = journal.admit_parent(admission([(0, 10), (10, 20)]))
    parent_id = admitted.parent.parent_id
    first, second = (child.operation_id for child in admitted.parent.children)
    journal.acquire_lease(second, "mutation", "worker-b", 120)
    journal.acquire_lease(first, "mutation", "worker-a", 60)
    short = journal.acquire_lease(parent_id, "operator", "ops", 30)

    leases = journal.list_live_leases(parent_id)

    assert [(lease.operation_id, lease.kind, lease.holder) for lease in leases] == [
        (parent_id, "operator", "ops"), (first, "mutation", "worker-a"),
        (second, "mutation", "worker-b")]
    assert leases[0].expires_at == short.expires_at
    journal.release_lease(short)
    assert [lease.holder for lease in journal.list_live_leases(parent_id)] == [
        "worker-a", "worker-b"]
