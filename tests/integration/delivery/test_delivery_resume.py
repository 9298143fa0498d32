"""Resuming an admitted delivery from the journal and the sealed payload documents alone (on
both journals): the accepted job is observed, never resubmitted, and a sealed child that is not
the admitted one is refused before any request."""

from __future__ import annotations

import random

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation
from dpone.executor.supervisor import DeliveryCompleted, resume, sealed_children
from support.delivery import HOLDER, HarnessFactory, no_sleep


class WorkerLost(Exception):
    """The worker stops right after a step (its process is gone)."""


def _stop_after_first_receipt(operation: ChildOperation, transition_id: str) -> None:
    if operation.ordinal == 1 and transition_id == "submitting_async_receipt_accepted":
        raise WorkerLost


def test_resume_observes_the_accepted_job_then_delivers_the_rest(harness: HarnessFactory) -> None:
    h = harness("async")
    with pytest.raises(WorkerLost):
        h.run(on_step=_stop_after_first_receipt)
    parent = h.parent()
    assert [c.state_name for c in parent.children] == ["accepted", "sealed"]
    assert [c.payload_document_key for c in parent.children] == [
        c.document.key for c in h.topology.children]
    job = (parent.children[0].receipt or {})["id"]

    sealed = sealed_children(parent, h.store)
    assert sealed == h.topology.children
    result = resume(h.plan, parent.parent_id, sealed, h.journal, h.store, h.transport,
                    holder=HOLDER, sleep=no_sleep, rng=random.Random(3))

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == 2
    first = result.children[0]
    assert (first.attempt_ordinal, first.receipt["id"]) == (1, job)
    assert h.count("POST") == 2
    assert h.requests().get(f"GET /mock/v1/dataset-jobs/{job}", 0) >= 1
    ledger = h.ledger()
    assert ledger["mutations_total"] == 2 and ledger["duplicate_mutations"] == 0
    assert ledger["rows_total"] == h.topology.total_rows


@pytest.mark.parametrize("field", ["delivery_key", "receiver_mutation_key",
                                   "mutation_intent_digest", "payload_digest"])
def test_a_sealed_child_that_is_not_the_admitted_one_is_refused_before_any_request(
        harness: HarnessFactory, field: str) -> None:
    h = harness("async")
    with pytest.raises(WorkerLost):
        h.run(on_step=_stop_after_first_receipt)
    parent = h.parent()
    before = h.requests()
    children = list(h.topology.children)
    forged = "sha256:" + "3" * 64
    if field == "payload_digest":
        payload = children[1].payload.model_copy(update={"digest": forged})
        children[1] = children[1].model_copy(update={"payload": payload})
    else:
        identities = children[1].identities.model_copy(update={field: forged})
        children[1] = children[1].model_copy(update={"identities": identities})

    with pytest.raises(DponeError) as refused:
        resume(h.plan, parent.parent_id, children, h.journal, h.store, h.transport,
               holder=HOLDER, sleep=no_sleep)

    assert refused.value.code == "REST_DELIVERY_INTENT_CONFLICT"
    assert refused.value.details["field"] == field
    assert h.requests() == before
    assert h.journal.load_parent(parent.parent_id) == parent
