"""Deliveries that succeed: the example dataset in both families, a request that provably never
started, and a duplicate answer whose receipt proves the same key (on both journals)."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from dpone.contracts import RemoteEffect
from dpone.executor.supervisor import DeliveryCompleted, outbound_request
from dpone.executor.transport import Response
from support.common import free_port
from support.delivery import FULL, FirstSendTo, Harness, HarnessFactory, http_transport, row_key

FAMILIES = pytest.mark.parametrize("family", ["sync", "async"])


def _assert_every_row_once(h: Harness) -> None:
    ledger = h.ledger()
    children = h.topology.children
    assert ledger["mutations_total"] == len(children)
    assert ledger["duplicate_mutations"] == 0
    assert ledger["rows_total"] == h.topology.total_rows
    assert ledger["rows_by_key"] == {h.sealed.mutation_key(c.descriptor.ordinal):
                                     c.descriptor.row_count for c in children}
    assert Counter(map(row_key, h.ledger_rows())) == Counter(map(row_key, h.sealed.sealed_rows()))


@FAMILIES
def test_the_example_dataset_is_delivered_once_and_a_second_run_sends_nothing(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family, FULL)
    children = h.topology.children
    assert len(children) == {"sync": 5, "async": 11}[family]

    result = h.run()

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == len(children)
    assert [c.ordinal for c in result.children] == list(range(1, len(children) + 1))
    assert all(c.attempt_ordinal == 1 for c in result.children)
    assert all(c.receipt["accepted_rows"] == s.descriptor.row_count
               for c, s in zip(result.children, children, strict=True))
    _assert_every_row_once(h)
    parent = h.journal.load_parent(result.parent_id)
    assert parent.checkpoint_frontier == len(children)
    final = "final_succeeded_full_promoted"
    assert [c.state_name for c in parent.children] == [final] * len(children)
    assert all(c.axes.remote_effect == RemoteEffect.FULLY_APPLIED for c in parent.children)
    assert h.count("POST") == len(children)
    if family == "async":
        receipt = h.child(1).receipt or {}
        assert (receipt["phase"], receipt["accepted_rows"], receipt["rejected_rows"]) == (
            "complete", children[0].descriptor.row_count, 0)
        assert h.outcomes(1) == [(1, "submitting_async_receipt_accepted")]
    else:
        assert h.outcomes(1) == [(1, "submitting_sync_success")]
    before = h.requests()

    again = h.run()

    assert isinstance(again, DeliveryCompleted), again
    assert again.parent_id == result.parent_id
    assert again.checkpoint_frontier == len(children)
    assert h.requests() == before
    assert h.ledger()["mutations_total"] == len(children)


@FAMILIES
def test_a_refused_connection_waits_and_retries_as_a_second_attempt(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family)
    refused = http_transport(h.plan, f"http://127.0.0.1:{free_port()}")
    transport = FirstSendTo(refused, h.transport)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    try:
        result = h.run(transport=transport, sleep=sleep)
    finally:
        refused.close()

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == len(h.topology.children)
    assert result.children[0].attempt_ordinal == 2
    assert all(c.attempt_ordinal == 1 for c in result.children[1:])
    first = {"sync": "submitting_sync_success", "async": "submitting_async_receipt_accepted"}
    assert h.outcomes(1) == [(1, "submitting_not_started_retry"), (2, first[family])]
    assert (1, "submitting_not_started_retry") in h.steps
    assert len(waits) == 1 and waits[0] > 0  # the retry waited for its due time
    ledger = h.ledger()
    assert ledger["mutations_total"] == len(h.topology.children)
    assert ledger["duplicate_mutations"] == 0
    assert h.count("POST") == len(h.topology.children)  # the refused attempt sent nothing
    assert h.child(1).state_name == "final_succeeded_full_promoted"


def test_a_duplicate_answer_with_the_same_key_receipt_resumes_observation(
        harness: HarnessFactory) -> None:
    h = harness("async")
    first = h.topology.children[0]
    presubmitted = h.transport.send(outbound_request(h.plan, first, h.store))
    assert isinstance(presubmitted, Response) and presubmitted.status == 202
    job_id = h.receiver.state.jobs.by_filename(first.request.filename or "")
    assert job_id is not None

    result = h.run()

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == 2
    assert result.children[0].attempt_ordinal == 1
    assert result.children[0].receipt["id"] == job_id.job_id
    assert h.outcomes(1) == [(1, "submitting_duplicate_receipt_same_intent")]
    assert (1, "submitting_duplicate_receipt_same_intent") in h.steps
    ledger = h.ledger()
    assert ledger["mutations_total"] == 2  # the pre-submitted job and child 2: no new job
    assert ledger["duplicate_mutations"] == 0
    assert h.count("POST") == 3
    assert ledger["rows_by_key"][h.sealed.mutation_key(1)] == first.descriptor.row_count
    assert h.child(1).state_name == "final_succeeded_full_promoted"
