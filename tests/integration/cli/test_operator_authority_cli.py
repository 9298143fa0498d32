"""Audited operator authority: `dpone delivery resume --apply` holds the delivery's operator
lease (holder: the operator) for the run, releases it however the run ends, and records one
``operator_resume`` audit row (who, when by the journal clock, revisions before and after);
`dpone delivery inspect` shows that trail. The preview and inspect take no lease and write
nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.cli._inputs import close_quietly, open_existing_journal
from dpone.contracts import DponeError
from dpone.contracts.journal import DeliveryJournalPort
from dpone.receiver import ReceiverThread
from support.cli import TWO_ASYNC_CHILDREN, Dpone, posts


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal=journal_url)


@pytest.fixture
def journal(dpone: Dpone) -> Iterator[DeliveryJournalPort]:
    """The journal as another worker sees it, after a first delivery created it."""
    run = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
    assert run.code == 0 and run.json()["status"] == "pending", run.out + run.err
    opened = open_existing_journal(dpone.journal_url, environment_id="local-dev")
    yield opened
    close_quietly(opened)


def _pending(journal: DeliveryJournalPort) -> str:
    """The delivery the ``journal`` fixture left pending on child 1's receipt."""
    [delivery] = journal.list_deliveries(1)
    return delivery.parent_id


def _lease_is_free(journal: DeliveryJournalPort, parent_id: str) -> bool:
    """Another operator can take the delivery's operator lease now (and gives it back)."""
    try:
        lease = journal.acquire_lease(parent_id, "operator", "probe", 60)
    except DponeError as error:
        assert error.code == "journal.lease_held"
        return False
    journal.release_lease(lease)
    return True


def test_resume_apply_records_who_and_the_revisions_and_inspect_shows_the_trail(
        dpone: Dpone, journal: DeliveryJournalPort, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    parent_id = _pending(journal)
    before = sum(c.revision for c in journal.load_parent(parent_id).children)
    monkeypatch.setattr("dpone.cli._inputs.getpass.getuser", lambda: "os-user-7")

    preview = dpone.resume(parent_id, "--format", "json")
    assert preview.code == 0 and journal.list_operator_actions([parent_id]) == []
    assert _lease_is_free(journal, parent_id)
    by_flag = dpone.resume(parent_id, "--apply", "--actor", "ops@example", "--format", "json")
    by_os_user = dpone.resume(parent_id, "--apply", "--wait", "--format", "json")
    inspected = dpone.inspect(parent_id, "--format", "json")
    text = dpone.inspect(parent_id)

    assert by_flag.code == 0 and by_os_user.code == 0, by_flag.err + by_os_user.err
    assert by_os_user.json()["status"] == "completed"
    after = sum(c.revision for c in journal.load_parent(parent_id).children)
    first, second = journal.list_operator_actions([parent_id])
    assert [(a.transition_id, a.actor) for a in (first, second)] == [
        ("operator_resume", "ops@example"), ("operator_resume", "os-user-7")]
    assert first.before_revision == before and first.after_revision == second.before_revision
    assert second.after_revision == after > second.before_revision
    assert (second.from_state, second.to_state) == ("pending", "completed")
    moved = second.details["children"]
    assert [c["ordinal"] for c in moved] == [1, 2]
    assert all(c["after_revision"] > c["before_revision"] for c in moved)
    assert first.at <= second.at <= journal.now()
    assert _lease_is_free(journal, parent_id)  # released when each run ended

    assert inspected.code == 0, inspected.out + inspected.err
    trail = inspected.json()["operator_actions"]  # schema-valid (Run.json checks it)
    assert [(a["actor"], a["command"], a["operation_id"], a["before_revision"],
             a["after_revision"]) for a in trail] == [
        ("ops@example", "resume", parent_id, first.before_revision, first.after_revision),
        ("os-user-7", "resume", parent_id, second.before_revision, second.after_revision)]
    assert text.code == 0
    lines = text.out.splitlines()
    table = lines[lines.index("operator actions:") + 1:]
    assert table[0].split() == ["at", "(journal)", "actor", "command", "on", "revision",
                                "state", "evidence"]
    assert table[2].split()[1:5] == ["os-user-7", "resume", "delivery",
                                     f"{second.before_revision}->{second.after_revision}"]


def test_a_second_operator_is_refused_while_the_lease_is_held_and_nothing_is_sent(
        dpone: Dpone, journal: DeliveryJournalPort, receiver: ReceiverThread) -> None:
    parent_id = _pending(journal)
    held = journal.acquire_lease(parent_id, "operator", "alice", 600)
    sent = posts(receiver)

    run = dpone.resume(parent_id, "--apply", "--actor", "bob", "--format", "json")

    assert run.code == 3, run.out + run.err
    error = run.json()
    assert error["code"] == "journal.lease_held"
    assert error["details"]["holder"] == "alice" and "alice" in error["message"]
    assert posts(receiver) == sent
    assert journal.list_operator_actions([parent_id]) == []
    journal.release_lease(held)


@pytest.mark.parametrize("failure", [
    DponeError(code="receiver.unavailable", message="receiver gone"),
    RuntimeError("the process is going down"),
])
def test_the_lease_is_released_and_the_action_recorded_however_the_run_ends(
        dpone: Dpone, journal: DeliveryJournalPort, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch, failure: Exception) -> None:
    parent_id = _pending(journal)

    def failing(*_args: object, **_kwargs: object) -> None:
        raise failure

    monkeypatch.setattr("dpone.cli.delivery.resume.resume", failing)
    run = dpone.resume(parent_id, "--apply", "--actor", "carol", "--format", "json")

    assert run.code != 0
    assert _lease_is_free(journal, parent_id)
    [action] = journal.list_operator_actions([parent_id])
    assert action.actor == "carol" and action.before_revision == action.after_revision
