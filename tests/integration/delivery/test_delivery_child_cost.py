"""What one synchronous child costs the journal and the artifact store: counted, never timed.

A synchronous child that succeeds takes three journal transactions (each one commit): the
mutation lease with its first attempt planned and the receiver account's shared submit turn with
an active-request slot (freed by the lease's release), the critical SUBMITTING transaction, and
the settling transaction that records the response, verifies its counters under an observation
lease held inside it and releases the mutation lease (and with it the slot). The checkpoint
frontier is promoted under a checkpoint lease held the same way, once per stride of children and
when the run ends.
A child writes two artifacts: its MAY_ATTEMPT marker (durable before SUBMITTING commits) and the
evidence of the response (durable before the transition that names its digest commits).
Admission is one more critical transaction per delivery. These are ceilings: a change that
needs more fails here and says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Final

from dpone.contracts.journal import DeliveryJournalPort
from dpone.contracts.ports import ArtifactRef, ImmutableArtifactPort
from dpone.executor.supervisor import DeliveryCompleted, deliver
from dpone.executor.supervisor._decide import PROMOTION_STRIDE
from support.delivery import FULL, HOLDER, HarnessFactory, no_sleep

TRANSACTIONS_PER_CHILD: Final = {"write": 1, "critical": 2, "read": 0}
"""Per synchronous child: ``write`` = the mutation lease taken with its attempt planned and its
submit turn with an active-request slot; ``critical`` = SUBMITTING, and the response settled
with its verification and the lease's release."""
ADMISSION: Final = Counter({"critical": 1})
ARTIFACT_WRITES_PER_CHILD: Final = {"markers": 1, "evidence": 1}


class CountingStore:
    """The artifact store, counting writes by the key's first segment."""

    def __init__(self, inner: ImmutableArtifactPort) -> None:
        self._inner = inner
        self.writes: Counter[str] = Counter()

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef:
        self.writes[key.split("/", 1)[0]] += 1
        return self._inner.put_bytes(key, data)

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        self.writes[key.split("/", 1)[0]] += 1
        return self._inner.put_stream(key, chunks)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def counting_transactions(journal: DeliveryJournalPort) -> Counter[str]:
    """Count every transaction the journal adapter runs, by kind (one ``_run`` = one commit)."""
    counted: Counter[str] = Counter()
    run: Callable[[Any, str], Any] = journal._run  # type: ignore[attr-defined]

    def transaction(work: Any, kind: str) -> Any:
        counted[kind] += 1
        return run(work, kind)

    journal._run = transaction  # type: ignore[attr-defined]
    return counted


def test_a_sync_child_costs_three_transactions_and_two_artifact_writes(
        harness: HarnessFactory, journal: DeliveryJournalPort) -> None:
    h = harness("sync", FULL)
    children = len(h.topology.children)
    assert children >= 2
    store = CountingStore(h.store)
    transactions = counting_transactions(journal)
    result = deliver(h.plan, h.topology, journal, store,  # type: ignore[arg-type]
                     h.transport, holder=HOLDER, sleep=no_sleep)
    assert isinstance(result, DeliveryCompleted)
    assert result.checkpoint_frontier == children
    promotions = Counter({"critical": -(-children // PROMOTION_STRIDE)})
    ceiling = ADMISSION + promotions + Counter({kind: n * children
                                                for kind, n in TRANSACTIONS_PER_CHILD.items()})
    over = {kind: (transactions[kind], ceiling[kind]) for kind in transactions
            if transactions[kind] > ceiling[kind]}
    assert not over, f"journal transactions (counted, ceiling) above the ceiling: {over}"
    assert sum(transactions.values()) <= 1 + 3 * children + promotions["critical"]
    assert store.writes == Counter({prefix: n * children
                                    for prefix, n in ARTIFACT_WRITES_PER_CHILD.items()})
    assert h.ledger()["rows_total"] == h.topology.total_rows


def test_leases_held_for_one_transaction_are_gone_when_it_commits(
        harness: HarnessFactory, journal: DeliveryJournalPort) -> None:
    """A second holder can take every lease the moment a delivery returns: none of the
    verification and promotion leases held inside their transactions outlives them."""
    h = harness("sync", FULL)
    assert isinstance(h.run(), DeliveryCompleted)
    parent = h.parent()
    for child in parent.children:
        for kind in ("mutation", "observation"):
            lease = journal.acquire_lease(child.operation_id, kind, "second-holder", 60)
            assert lease.token >= 1
    assert journal.acquire_lease(parent.parent_id, "checkpoint", "second-holder", 60).token >= 1
