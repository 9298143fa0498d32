"""The statements a child's pre-submit steps run, on every journal: the parent's row comes with
its submit authority (one statement), never read a second time in the same transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from dpone.contracts.journal import DeliveryJournalPort
from dpone.journal._marker import marker_digest
from support.journal import admission


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
