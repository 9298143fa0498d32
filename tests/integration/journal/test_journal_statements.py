"""The statements a child's pre-submit steps run, on every journal: the parent's row comes with
its submit authority (one statement), never read a second time in the same transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from dpone.contracts.journal import DeliveryJournalPort, LeaseClaim, TransitionRequest
from dpone.journal._marker import marker_digest
from support.journal import admission, submit


class _Counting:
    """A transaction that records the name of every query it runs."""

    def __init__(self, tx: Any, names: list[str]) -> None:
        self._tx, self._names = tx, names

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(self._tx, attribute)
        if attribute not in ("one", "all", "run", "run_many"):
            return value

        def counted(name: str, *args: Any, **params: Any) -> Any:
            self._names.append(name)
            return value(name, *args, **params)

        return counted


@contextmanager
def _statements(journal: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    names: list[str] = []
    run = journal._run

    def counting(work: Callable[[Any], Any], kind: str) -> Any:
        return run(lambda tx: work(_Counting(tx, names)), kind)

    monkeypatch.setattr(journal, "_run", counting)
    yield names


def test_the_pre_submit_steps_read_the_parent_once_with_its_authority(
        journal: DeliveryJournalPort, monkeypatch: pytest.MonkeyPatch) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    revision = journal.get_child(operation_id).revision
    with _statements(journal, monkeypatch) as names:
        begun = journal.begin_attempt(operation_id, "worker-1", 60)
        planned = list(names)
        assert begun.attempt is not None
        names.clear()
        submitted = journal.enter_submitting(begun.attempt, marker_digest(begun.attempt.marker),
                                             begun.lease, revision)
    assert submitted.state_name == "submitting"
    for step in (planned, names):
        assert step.count("submit_authority") == 1, step
        assert "get_parent" not in step, step


def test_a_settled_answer_gives_both_leases_up_in_one_statement(
        journal: DeliveryJournalPort, monkeypatch: pytest.MonkeyPatch) -> None:
    operation_id = journal.admit_parent(
        admission([(0, 10)], kind="incremental_append")).parent.children[0].operation_id
    child, lease = submit(journal, operation_id)
    answer = TransitionRequest(operation_id=operation_id, transition_id="submitting_sync_success",
                               expected_revision=child.revision, facts=("response_recorded",),
                               receipt={"http_status": 200, "accepted_rows": 10})
    verified = TransitionRequest(operation_id=operation_id,
                                 transition_id="verifying_succeeded_verified_full",
                                 expected_revision=child.revision + 1,
                                 facts=("verification_recorded", "all_rows_accounted"))
    claim = LeaseClaim(operation_id=operation_id, kind="observation", holder="worker-1",
                       ttl_seconds=60)
    with _statements(journal, monkeypatch) as names:
        journal.settle_response(answer, lease, verification=verified, verification_lease=claim)
    assert names.count("release_two_leases") == 1 and "release_lease" not in names, names
    for kind in ("mutation", "observation"):  # both free once it committed
        assert journal.acquire_lease(operation_id, kind, "other", 60).holder == "other"
