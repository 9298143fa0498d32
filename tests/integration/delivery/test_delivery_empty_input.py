"""Date windows without rows send nothing, on both journals and in both families.

The planner keeps empty windows as children (the coverage proof stays contiguous). Under the
examples' ``empty_input: skip`` such a child is finalized without a marker, an attempt or a
request, and the frontier passes over it. Under ``empty_input: promote`` an append's empty child
is verified 0 of 0 and promoted with the frontier, still without a request (appending nothing is
vacuous); a replacement's empty child is submitted like any other (replacing a window with
nothing deletes the receiver's rows there), verified by the receiver's counters 0 of 0. A
not-started child with rows still stops the frontier.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest

from dpone.contracts import RemoteEffect
from dpone.executor.supervisor import (
    DeliveryBlocked,
    DeliveryCompleted,
    allowed_actions,
    parent_admission,
    resume_step,
)
from support.common import EXAMPLES
from support.delivery import WORKLOADS, Harness, HarnessFactory

WITH_EMPTY_WINDOWS = {"sync": (dt.date(2026, 7, 1), dt.date(2026, 9, 1)),
                      "async": (dt.date(2026, 7, 20), dt.date(2026, 9, 10))}
"""The example data holds rows from 2026-08-01 to 2026-08-31 only."""
PROFILES = {"sync": "mock.batch-ndjson@1.yaml", "async": "mock.dataset-jobs@1.yaml"}
FAMILIES = pytest.mark.parametrize("family", ["sync", "async"])


def _split(h: Harness) -> tuple[list[int], list[int]]:
    """(ordinals without rows, ordinals with rows); the fixture must hold both."""
    children = h.topology.children
    empty = [c.descriptor.ordinal for c in children if c.descriptor.row_count == 0]
    full = [c.descriptor.ordinal for c in children if c.descriptor.row_count > 0]
    assert empty and full, "the interval must hold windows with and without rows"
    return empty, full


def _edit(path: Path, pattern: str, replacement: str) -> None:
    text, replaced = re.subn(pattern, replacement, path.read_text(encoding="utf-8"), flags=re.M)
    assert replaced == 1, (path, pattern)
    path.write_text(text, encoding="utf-8")


def _promoting(root: Path, family: str, kind: str | None = None) -> Path:
    """The example registry whose profile of ``family`` says ``empty_input: promote`` (and whose
    workload of ``family`` has the mutation ``kind``, when given)."""
    registry = root / "registry"
    shutil.copytree(EXAMPLES, registry)
    _edit(registry / "profiles" / PROFILES[family], r"^  empty_input: skip$",
          "  empty_input: promote")
    if kind is not None:
        _edit(registry / "workloads" / f"{WORKLOADS[family]}.yaml",
              r"^    kind: [a-z_]+$", f"    kind: {kind}")
    return registry


def _assert_only_rows_were_sent(h: Harness, full: list[int]) -> None:
    ledger = h.ledger()
    assert h.count("POST") == len(full)
    assert ledger["mutations_total"] == len(full)
    assert ledger["rows_total"] == h.topology.total_rows
    assert set(ledger["rows_by_key"]) == {h.sealed.mutation_key(n) for n in full}


@FAMILIES
def test_empty_windows_are_skipped_without_a_request_and_the_delivery_completes(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family, WITH_EMPTY_WINDOWS[family])
    empty, full = _split(h)
    total = len(h.topology.children)

    result = h.run()

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == total
    assert [c.ordinal for c in result.children] == list(range(1, total + 1))
    _assert_only_rows_were_sent(h, full)
    parent = h.journal.load_parent(result.parent_id)
    assert parent.checkpoint_frontier == total
    for ordinal in empty:
        child = parent.children[ordinal - 1]
        assert child.state_name == "final_not_started"
        assert child.axes.remote_effect is RemoteEffect.NONE_PROVEN
        assert (child.attempt_ordinal, child.receipt, child.last_error_code) == (0, None, None)
        assert child.empty_input == "skipped"
        assert h.journal.list_attempts(child.operation_id) == []
        assert [step for step in h.steps if step[0] == ordinal] == [
            (ordinal, "sealed_empty_input_skipped")]
    assert {parent.children[n - 1].state_name for n in full} == {"final_succeeded_full_promoted"}
    markers = {p.parent.name for p in (h.store.root / "markers").rglob("*.json")}
    assert markers == {parent.children[n - 1].operation_id for n in full}
    before = h.requests()

    again = h.run()

    assert isinstance(again, DeliveryCompleted), again
    assert again.checkpoint_frontier == total
    assert h.requests() == before


def test_empty_input_promote_verifies_empty_append_windows_without_a_request(
        harness: HarnessFactory, tmp_path: Path) -> None:
    family = "sync"
    h = harness(family, WITH_EMPTY_WINDOWS[family], registry=_promoting(tmp_path, family))
    assert h.plan.profile.snapshot.result_policy.empty_input == "promote"
    assert h.plan.source_boundary.mutation_kind == "incremental_append"
    empty, full = _split(h)
    total = len(h.topology.children)

    result = h.run()

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == total
    _assert_only_rows_were_sent(h, full)
    parent = h.journal.load_parent(result.parent_id)
    for ordinal in empty:
        child = parent.children[ordinal - 1]
        assert child.state_name == "final_not_accepted_full_promoted"
        assert child.axes.remote_effect is RemoteEffect.FULLY_APPLIED
        assert child.axes.verification_state == "PASSED"
        assert (child.attempt_ordinal, child.receipt) == (0, None)
        assert child.empty_input == "verified"
        assert h.journal.list_attempts(child.operation_id) == []
        assert (ordinal, "sealed_empty_input_verified") in h.steps


@FAMILIES
def test_empty_input_promote_submits_empty_replacement_windows(
        harness: HarnessFactory, family: str, tmp_path: Path) -> None:
    """Replacing a window with nothing deletes the receiver's rows there: a real effect, so the
    empty child is sent (its sealed empty payload) and verified by the receiver, 0 of 0."""
    registry = _promoting(tmp_path, family, kind="partition_replace")
    h = harness(family, WITH_EMPTY_WINDOWS[family], registry=registry)
    assert h.plan.source_boundary.mutation_kind == "partition_replace"
    empty, _full = _split(h)
    total = len(h.topology.children)
    h.journal.admit_parent(parent_admission(h.plan, h.topology))
    assert resume_step(h.child(empty[0]), h.plan) == "submit"

    result = h.run()

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == total
    ledger = h.ledger()
    assert h.count("POST") == total
    assert ledger["mutations_total"] == total
    assert ledger["rows_total"] == h.topology.total_rows
    assert {key: rows for key, rows in ledger["rows_by_key"].items() if rows == 0} == {
        h.sealed.mutation_key(n): 0 for n in empty}
    parent = h.journal.load_parent(result.parent_id)
    for ordinal in empty:
        child = parent.children[ordinal - 1]
        assert child.state_name == "final_succeeded_full_promoted"
        assert child.axes.remote_effect is RemoteEffect.FULLY_APPLIED
        assert child.attempt_ordinal == 1
        assert child.empty_input is None
        assert len(h.journal.list_attempts(child.operation_id)) == 1
    assert not [step for step in h.steps if step[1].startswith("sealed_empty_input")]


def test_a_not_started_child_with_rows_still_stops_the_frontier(harness: HarnessFactory) -> None:
    older = harness("async", (dt.date(2026, 7, 29), dt.date(2026, 8, 4)), store="older")
    empty, full = _split(older)
    assert empty == [1] and full == [2]
    older.journal.admit_parent(parent_admission(older.plan, older.topology))
    assert [resume_step(older.child(n)) for n in (1, 2)] == ["finalize_empty_input", "submit"]
    newer = harness("async", (dt.date(2026, 8, 1), dt.date(2026, 8, 9)), store="newer")
    assert isinstance(newer.run(), DeliveryCompleted)
    posts = newer.count("POST")

    result = older.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_STALE_GENERATION"
    assert result.checkpoint_frontier == 1
    assert older.count("POST") == posts
    refused = older.child(2)
    assert (refused.state_name, refused.empty_input) == ("final_not_started", None)
    skipped = older.child(1)
    assert skipped.empty_input == "skipped"
    assert (resume_step(skipped), allowed_actions(skipped)) == ("none", ())
    assert resume_step(refused) == "stop"
    again = older.run()
    assert isinstance(again, DeliveryBlocked) and again.checkpoint_frontier == 1
    assert older.journal.load_parent(result.parent_id).checkpoint_frontier == 1
