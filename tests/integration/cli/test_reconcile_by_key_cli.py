"""`dpone delivery reconcile` with neither --receipt-id nor --evidence: the certified query by
key, over loopback against the real mock receiver, on both journals.

The async example certifies ``acknowledgement.query_by_key`` for local-dev. A job found under
the child's key is polled like ``--receipt-id``; an absent key proves "not applied" only once
the latest attempt started receipt TTL + skew ago (earlier: exit 4, nothing recorded, the
instant it will prove something named); a profile without a lookup needs one of the two other
proofs. Every lookup is a read: the receiver's ledger shows no mutation from it.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

import pytest

from dpone.cli._inputs import close_quietly, open_existing_journal
from dpone.receiver import ReceiverThread
from support.cli import (
    FULL,
    ONE_ASYNC_CHILD,
    TWO_ASYNC_CHILDREN,
    Dpone,
    posts,
    receiver_requests,
)
from support.reconcile import DROP_ASYNC, DROP_SYNC, bare_duplicate, journal_state, reconcile

REFUSED_ASYNC = {"match": {"method": "POST", "path_prefix": "/mock/v1/dataset-jobs"},
                 "fault": "status", "status": 502, "after_commit": False}
EXPIRE_FIRST_RECEIPT = {"match": {"method": "GET", "path_prefix": "/mock/v1/dataset-jobs/"},
                        "fault": "expire_receipt", "status": 410}
PROFILE = Path("profiles") / "mock.dataset-jobs@1.yaml"


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal_url)


def _edit(registry: Path, *replacements: tuple[str, str]) -> None:
    profile = registry / PROFILE
    text = profile.read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    profile.write_text(text, encoding="utf-8")


def _single_attempt(registry: Path) -> None:
    """No same-key replay: a 502 after the request may have arrived leaves the effect unknown."""
    _edit(registry, ("submit: {max_attempts: 3,", "submit: {max_attempts: 1,"))


def _short_horizon(registry: Path) -> None:
    """A test copy certifying absence after 2 s + 1 s (and submits bounded by 2 s)."""
    _edit(registry, ("receipt_ttl_s: 600", "receipt_ttl_s: 2"),
          ("skew_margin_s: 60", "skew_margin_s: 1"),
          ("request_total_s: 120", "request_total_s: 2"),
          ("connect_s: 5", "connect_s: 1"), ("write_s: 60", "write_s: 2"),
          ("read_s: 30", "read_s: 2"))


def _blocked_child(run: Any) -> tuple[str, str]:
    assert run.code == 4, run.out + run.err
    document = run.json()
    blocked = document["blocked"]
    assert "reconcile_delivery_key" in blocked["allowed_actions"]
    return str(document["parent_id"]), str(blocked["operation_id"])


def _wait_for_journal_clock(dpone: Dpone, moment: dt.datetime) -> None:
    """Wait until the journal's own clock (the query's time base) has passed ``moment``."""
    journal = open_existing_journal(dpone.journal_url, environment_id="local-dev")
    try:
        while journal.now() < moment:
            time.sleep(0.2)
    finally:
        close_quietly(journal)


def _latest_attempt(dpone: Dpone, child_id: str) -> dt.datetime:
    journal = open_existing_journal(dpone.journal_url, environment_id="local-dev")
    try:
        started = journal.list_attempts(child_id)[-1]["started_at"]
    finally:
        close_quietly(journal)
    assert isinstance(started, dt.datetime)
    return started


def _mutations_by_key(receiver: ReceiverThread) -> dict[str, int]:
    counts: dict[str, int] = {}
    for mutation in receiver.state.ledger.mutations:
        counts[mutation.key] = counts.get(mutation.key, 0) + 1
    return counts


def _lookups(receiver: ReceiverThread) -> int:
    return sum(n for line, n in receiver.state.ledger.snapshot()["requests"].items()
               if line.startswith("GET /mock/v1/dataset-job-keys/"))


def test_a_cut_after_commit_is_found_by_key_without_flags_then_resumed(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    bare_duplicate(registry)
    receiver.state.faults.install([DROP_ASYNC])
    parent_id, child_id = _blocked_child(
        dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json"))
    submits = posts(receiver)

    preview = reconcile(dpone, child_id, "--format", "json")
    assert preview.code == 0, preview.out + preview.err
    assert preview.json()["applied"] is False
    command = preview.json()["next_command"]  # the same query, applied: no proof flags
    assert command.startswith(f"dpone delivery reconcile --operation-id {child_id} ")
    assert command.endswith(" --apply") and "--receipt-id" not in command
    assert "--evidence" not in command
    applied = reconcile(dpone, child_id, "--apply", "--format", "json")

    assert applied.code == 0, applied.out + applied.err
    document = applied.json()
    proof = document["proof"]
    assert (proof["kind"], proof["authority"]) == ("query_by_key", "receiver_proven")
    assert receiver.state.jobs.get(str(proof["receipt_id"])) is not None  # the job found
    assert document["effect"] in {"applied", "running"}
    assert posts(receiver) == submits and _lookups(receiver) == 2  # preview + apply: reads
    stored = (dpone.state / "artifacts" / document["reconciliation_artifact"]["key"]).read_text()
    assert '"kind":"query_by_key"' in stored
    resumed = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    result = resumed.json()
    assert result["status"] == "completed" and result["checkpoint_frontier"] == 2
    ledger = receiver.state.ledger.snapshot()
    assert ledger["duplicate_mutations"] == 0 and ledger["rows_total"] == result["rows_total"]
    assert all(count == 1 for count in _mutations_by_key(receiver).values())


def test_an_expired_receipt_is_proven_applied_by_the_job_status_found_by_key_then_resumed(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    receiver.state.faults.install([EXPIRE_FIRST_RECEIPT])
    run = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--wait", "--format", "json")
    parent_id, child_id = _blocked_child(run)
    assert run.json()["blocked"]["code"] == "REST_DELIVERY_RECEIPT_EXPIRED"
    rows = next(c["rows"] for c in run.json()["children"] if c["operation_id"] == child_id)
    before = receiver_requests(receiver)
    [expired] = [line for line in before if line.startswith("GET /mock/v1/dataset-jobs/")]

    applied = reconcile(dpone, child_id, "--apply", "--format", "json")

    assert applied.code == 0, applied.out + applied.err
    document = applied.json()
    assert document["effect"] == "applied" and document["capacity"] == "released"
    assert (document["proof"]["kind"], document["proof"]["authority"]) == (
        "query_by_key", "receiver_proven")
    assert document["proof"]["receipt_id"] == expired.rsplit("/", 1)[1]
    assert (document["counters"]["accepted_rows"], document["counters"]["rejected_rows"],
            document["counters"]["sealed_rows"]) == (rows, 0, rows)
    sent = {line: n - before.get(line, 0) for line, n in receiver_requests(receiver).items()
            if n != before.get(line, 0)}
    assert list(sent.values()) == [1]  # the lookup, and no poll of the expired receipt
    assert next(iter(sent)).startswith("GET /mock/v1/dataset-job-keys/sha256:")
    resumed = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    result = resumed.json()
    assert result["status"] == "completed" and result["checkpoint_frontier"] == 2
    ledger = receiver.state.ledger.snapshot()
    assert ledger["duplicate_mutations"] == 0 and ledger["rows_total"] == result["rows_total"]
    assert posts(receiver) == 2
    assert all(count == 1 for count in _mutations_by_key(receiver).values())


def test_a_found_answer_certified_only_as_a_receipt_polls_it_and_an_expired_one_proves_nothing(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    _edit(registry, ("    answer: job_status\n", "    answer: receipt\n"))
    receiver.state.faults.install([EXPIRE_FIRST_RECEIPT])
    run = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--wait", "--format", "json")
    parent_id, child_id = _blocked_child(run)
    rows = next(c["rows"] for c in run.json()["children"] if c["operation_id"] == child_id)
    [expired] = [line for line in receiver_requests(receiver)
                 if line.startswith("GET /mock/v1/dataset-jobs/")]
    polls = receiver_requests(receiver)[expired]
    before = journal_state(dpone, parent_id)

    preview = reconcile(dpone, child_id)

    assert preview.code == 4, preview.out + preview.err
    assert "effect unknown" in preview.out
    assert f"counters: none reported of {rows} sealed row(s)" in preview.out
    assert "None" not in preview.out
    assert receiver_requests(receiver)[expired] == polls + 1  # the lookup's receipt, polled
    assert journal_state(dpone, parent_id) == before


def test_an_absent_key_before_the_horizon_proves_nothing_and_names_when_it_will(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    _single_attempt(registry)
    receiver.state.faults.install([REFUSED_ASYNC])
    parent_id, child_id = _blocked_child(
        dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json"))
    assert receiver.state.ledger.snapshot()["mutations_total"] == 0
    before = journal_state(dpone, parent_id)
    started = _latest_attempt(dpone, child_id)

    for extra in ((), ("--apply",)):
        run = reconcile(dpone, child_id, *extra, "--format", "json")

        assert run.code == 4, run.out + run.err
        error = run.json()
        assert error["code"] == "reconcile.absence_unproven"
        assert error["details"]["reason"] == "horizon_not_reached"
        assert dt.datetime.fromisoformat(error["details"]["proof_possible_at"]) == (
            started + dt.timedelta(seconds=600 + 60))
        assert "--receipt-id" in error["message"] and "--evidence" in error["message"]
        assert error["details"]["proof_possible_at"] in error["message"]
    text = reconcile(dpone, child_id)
    assert text.code == 4 and "reconcile.absence_unproven" in text.err
    assert journal_state(dpone, parent_id) == before
    assert not (dpone.state / "artifacts" / "reconciliations").exists()
    assert receiver.state.ledger.snapshot()["mutations_total"] == 0


def test_an_absent_key_after_the_horizon_is_not_applied_and_resubmitted_once(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    _single_attempt(registry)
    _short_horizon(registry)
    receiver.state.faults.install([REFUSED_ASYNC])
    run = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    parent_id, child_id = _blocked_child(run)
    _wait_for_journal_clock(dpone, _latest_attempt(dpone, child_id) + dt.timedelta(seconds=3))

    applied = reconcile(dpone, child_id, "--apply", "--actor", "ops@example.test",
                         "--format", "json")

    assert applied.code == 0, applied.out + applied.err
    document = applied.json()
    assert document["effect"] == "not_applied" and document["capacity"] == "released"
    assert (document["proof"]["kind"], document["proof"]["authority"]) == (
        "query_by_key", "receiver_proven")
    assert document["after"]["state_name"] == "final_not_accepted_none"
    assert "dpone delivery resume" in document["next_command"]
    resumed = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    child = next(c for c in resumed.json()["children"] if c["operation_id"] == child_id)
    assert child["attempt_ordinal"] == 2 and child["state_name"].endswith("_full_promoted")
    assert child["delivery_key"] == run.json()["children"][0]["delivery_key"]
    ledger = receiver.state.ledger.snapshot()
    assert ledger["duplicate_mutations"] == 0 and ledger["mutations_total"] == 1
    assert all(count == 1 for count in _mutations_by_key(receiver).values())


def test_without_a_certified_lookup_no_flags_names_the_three_ways(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    receiver.state.faults.install([DROP_SYNC])
    parent_id, child_id = _blocked_child(
        dpone.deliver("measurements_sync", FULL, "--format", "json"))
    before = journal_state(dpone, parent_id)

    run = reconcile(dpone, child_id, "--apply", "--format", "json")

    assert run.code == 2, run.out + run.err
    error = run.json()
    assert error["code"] == "reconcile.proof_required"
    assert all(way in error["message"] for way in ("query by key", "--receipt-id", "--evidence"))
    assert journal_state(dpone, parent_id) == before


def _plant_orphan_marker(dpone: Dpone, first_child: str, child_id: str) -> str:
    """A marker of an older journal epoch at ``child_id``'s first attempt key: what a journal
    restore leaves when a request was announced that the restored journal forgot."""
    [first] = (dpone.state / "artifacts" / "markers").glob(f"*/{first_child}/1.json")
    marker = json.loads(first.read_text(encoding="utf-8"))
    marker.update(operation_id=child_id, journal_epoch=marker["journal_epoch"] + 7,
                  child_ordinal=marker["child_ordinal"] + 1)
    orphan = first.parent.parent / child_id / "1.json"
    orphan.parent.mkdir(parents=True)
    orphan.write_text(json.dumps(marker, sort_keys=True), encoding="utf-8")
    return str(orphan.relative_to(dpone.state / "artifacts"))


def test_an_orphan_marker_of_an_older_epoch_stops_unknown_then_reconciles_and_resubmits(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    bare_duplicate(registry)
    _single_attempt(registry)
    _short_horizon(registry)
    receiver.state.faults.install([DROP_ASYNC])
    parent_id, first = _blocked_child(
        dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json"))
    second = first.removesuffix("_0001") + "_0002"
    orphan_key = _plant_orphan_marker(dpone, first, second)
    assert reconcile(dpone, first, "--apply", "--format", "json").code == 0
    submits = posts(receiver)

    stopped = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")

    assert stopped.code == 4, stopped.out + stopped.err
    blocked = stopped.json()["blocked"]
    assert (blocked["code"], blocked["operation_id"]) == (
        "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN", second)
    assert blocked["evidence"]["orphan_marker_key"] == orphan_key
    assert blocked["evidence"]["attempt_ordinal"] == 1
    assert "reconcile_delivery_key" in blocked["allowed_actions"]
    assert posts(receiver) == submits  # nothing was sent under the orphan's ordinal
    assert stopped.json()["next_command"].startswith(
        f"dpone delivery reconcile --operation-id {second} ")
    _wait_for_journal_clock(dpone, _latest_attempt(dpone, second) + dt.timedelta(seconds=3))

    proven = reconcile(dpone, second, "--apply", "--format", "json")

    assert proven.code == 0, proven.out + proven.err
    assert proven.json()["effect"] == "not_applied"
    resumed = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err
    assert resumed.json()["status"] == "completed"
    child = next(c for c in resumed.json()["children"] if c["operation_id"] == second)
    assert child["attempt_ordinal"] == 2  # the orphan's ordinal is never planned again
    ledger = receiver.state.ledger.snapshot()
    assert ledger["duplicate_mutations"] == 0
    assert all(count == 1 for count in _mutations_by_key(receiver).values())
