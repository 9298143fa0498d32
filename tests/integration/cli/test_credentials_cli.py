"""A wrong or missing credential over loopback, on both journals: the run exits 3 with nothing
applied (a missing one before anything is frozen or admitted), and once the credential is fixed
a rerun of `dpone deliver` or `dpone delivery resume
--apply` delivers the child once, with the same delivery key (exit 0). A 401 the profile does
not certify stays an unknown effect (exit 4) and `inspect` names the status as the likely cause.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from dpone.receiver import ReceiverThread
from support.cli import ONE_ASYNC_CHILD, TOKEN, TOKEN_ENV, Dpone, Run, posts

ONE_SYNC_CHILD = ("2026-08-01", "2026-08-08")
WRONG = "tok-cli-wrong-9Jx4-never-printed"


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal=journal_url)


def _stop(run: Run, code: str) -> str:
    """The parent id of an admitted run that stopped with ``code`` (exit 3): one
    ``dpone.delivery_result.v1``, blocked by the receiver's answer or stopped by the transport."""
    assert run.code == 3, run.out + run.err
    document = run.json()
    assert document["schema"] == "dpone.delivery_result.v1", document
    if document["status"] == "stopped":  # the transport raised before any request byte left
        assert document["stopped"]["code"] == code
        assert document["stopped"]["exit_code"] == 3
    else:
        assert document["status"] == "blocked", document
        assert document["blocked"]["code"] == code
        assert document["blocked"]["remote_effect"] == "NONE_PROVEN"
    return str(document["parent_id"])


def _waiting_child(dpone: Dpone, parent_id: str, code: str) -> dict[str, Any]:
    """Child 1 as inspect shows it: waiting in retry_wait, nothing applied, resumable."""
    inspected = dpone.inspect(parent_id, "--format", "json")
    assert inspected.code == 0, inspected.out + inspected.err
    child: dict[str, Any] = inspected.json()["children"][0]
    assert child["state_name"] == "retry_wait"
    assert child["axes"]["remote_effect"] == "NONE_PROVEN"
    assert child["last_error_code"] == code
    assert child["allowed_actions"] == ["resume_delivery"]
    return child


def _delivered_once(run: Run, receiver: ReceiverThread, waiting: dict[str, Any]) -> None:
    """Exit 0, the waiting child delivered as a new attempt with its delivery key, once."""
    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["schema"] == "dpone.delivery_result.v1"
    assert document["status"] == "completed"
    child = document["children"][0]
    assert child["delivery_key"] == waiting["delivery_key"]
    assert child["attempt_ordinal"] == waiting["attempt_ordinal"] + 1
    assert child["state_name"] == "final_succeeded_full_promoted"
    ledger = receiver.state.ledger.snapshot()
    assert ledger["mutations_total"] == 1 and ledger["duplicate_mutations"] == 0
    assert TOKEN not in run.out + run.err and WRONG not in run.out + run.err


def _listed(dpone: Dpone, parent_id: str) -> dict[str, Any]:
    """The delivery ``parent_id`` as `dpone delivery list --format json` shows it."""
    run = dpone("delivery", "list", "--journal", dpone.journal_url, "--format", "json")
    assert run.code == 0, run.out + run.err
    [entry] = [e for e in run.json()["deliveries"] if e["parent_id"] == parent_id]
    return entry


def _uncertify(registry: Path) -> None:
    profile = registry / "profiles" / "mock.batch-ndjson@1.yaml"
    text = profile.read_text(encoding="utf-8")
    profile.write_text(re.sub(r"^  rejected_before_effect_statuses: .*\n", "", text, flags=re.M),
                       encoding="utf-8")


def test_a_wrong_token_exits_3_and_the_right_token_delivers_on_rerun(
        dpone: Dpone, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, WRONG)

    run = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")

    parent_id = _stop(run, "credential.rejected")
    blocked = run.json()["blocked"]
    assert blocked["exit_code"] == 3
    assert blocked["evidence"]["http_status"] == 401
    assert blocked["evidence"]["credential_ref"] == f"env:{TOKEN_ENV}"
    assert blocked["allowed_actions"] == ["fix_credential", "resume_delivery"]
    assert "credential_ref" in blocked["operator_action"]
    waiting = _waiting_child(dpone, parent_id, "credential.rejected")
    assert waiting["likely_cause"]["http_status"] == 401
    text = dpone.inspect(parent_id)
    assert "likely cause: receiver answered 401: likely an authentication refusal the profile " \
        "certifies as refused before effect" in text.out
    assert receiver.state.ledger.snapshot()["mutations_total"] == 0
    assert posts(receiver) == 1

    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    _delivered_once(dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json"),
                    receiver, waiting)
    assert posts(receiver) == 2


def test_a_wrong_token_then_resume_apply_delivers_the_same_key(
        dpone: Dpone, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, WRONG)
    parent_id = _stop(dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json"),
                      "credential.rejected")
    waiting = _waiting_child(dpone, parent_id, "credential.rejected")
    monkeypatch.setenv(TOKEN_ENV, TOKEN)

    preview = dpone.resume(parent_id, "--format", "json")

    assert preview.code == 0, preview.out + preview.err
    [child] = preview.json()["children"]
    assert (child["next_action"], child["on_apply"]) == ("resume_delivery", "submit")
    assert "submit attempt 2 of the sealed request" in child["on_apply_text"]
    assert "same delivery key" in child["on_apply_text"]
    assert posts(receiver) == 1
    _delivered_once(dpone.resume(parent_id, "--apply", "--wait", "--format", "json"), receiver,
                    waiting)


def _refused_before_freeze(run: Run, dpone: Dpone, receiver: ReceiverThread) -> None:
    """``credential.unavailable`` (exit 3) before anything is frozen: no parent artifact, no
    journal entry, no request, and the reference named without any value."""
    assert run.code == 3, run.out + run.err
    document = run.json()
    assert document["schema"] == "dpone.error.v1", document
    assert document["code"] == "credential.unavailable"
    assert document["details"]["credential_ref"] == f"env:{TOKEN_ENV}"
    assert not (dpone.state / "artifacts").exists()
    listed = dpone("delivery", "list", "--journal", dpone.journal_url)
    assert "op_v1_" not in listed.out + listed.err  # no journal, or one without a delivery
    assert receiver.state.ledger.snapshot()["requests"] == {}


def test_a_missing_credential_exits_3_before_freezing_and_a_rerun_after_exporting_it_delivers(
        dpone: Dpone, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV)

    run = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")

    _refused_before_freeze(run, dpone, receiver)
    assert TOKEN_ENV in run.out
    _refused_before_freeze(dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json"),
                           dpone, receiver)

    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    done = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")
    assert done.code == 0, done.out + done.err
    [child] = done.json()["children"]
    assert child["attempt_ordinal"] == 1  # the refused runs counted no attempt
    assert child["state_name"] == "final_succeeded_full_promoted"
    assert posts(receiver) == 1


def test_a_missing_credential_of_an_async_profile_admits_nothing(
        dpone: Dpone, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV)

    run = dpone.deliver("measurements_async", ONE_ASYNC_CHILD)

    assert run.code == 3, run.out + run.err
    assert "credential.unavailable" in run.err and "sealed child" not in run.err
    assert not (dpone.state / "artifacts").exists()
    assert receiver.state.ledger.snapshot()["requests"] == {}


def test_an_uncertified_401_exits_4_and_inspect_names_the_status(
        dpone: Dpone, registry: Path, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _uncertify(registry)
    monkeypatch.setenv(TOKEN_ENV, WRONG)

    run = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")

    assert run.code == 4, run.out + run.err
    document = run.json()
    assert document["blocked"]["code"] == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert document["blocked"]["remote_effect"] == "UNKNOWN"
    parent_id = document["parent_id"]
    inspected = dpone.inspect(parent_id, "--format", "json")
    assert inspected.code == 0, inspected.out + inspected.err
    cause = inspected.json()["children"][0]["likely_cause"]
    expected = ("receiver answered 401: likely an authentication refusal; the profile does not "
                "certify it as refused before effect")
    assert cause["http_status"] == 401 and cause["summary"].startswith(expected)
    text = dpone.inspect(parent_id)
    assert f"likely cause: {expected}" in text.out
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    again = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")
    assert again.code == 4, again.out + again.err  # nothing proves the 401 applied nothing
    assert posts(receiver) == 1


def test_a_refused_credential_points_to_resume_and_lists_as_blocked(
        dpone: Dpone, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fix is the operator's (the credential), then `resume --apply`: the run's next command
    is that resume, with this run's locators, and the listing shows the delivery blocked."""
    monkeypatch.setenv(TOKEN_ENV, WRONG)

    run = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")

    parent_id = _stop(run, "credential.rejected")
    resume = shlex.join(["dpone", "delivery", "resume", "--operation-id", parent_id,
                         "--journal", dpone.journal_url, "--artifacts",
                         str(dpone.state / "artifacts"), "--plans", str(dpone.state), "--apply"])
    assert run.json()["next_command"] == resume
    text = dpone.deliver("measurements_sync", ONE_SYNC_CHILD)
    assert text.code == 3, text.out + text.err
    assert "blocked:" in text.out
    assert f"  next: {resume}" in text.out.splitlines()
    entry = _listed(dpone, parent_id)
    assert (entry["status"], entry["blocked_code"]) == ("blocked", "credential.rejected")
    assert entry["next_actions"] == ["resume_delivery"]
    listing = dpone("delivery", "list", "--journal", dpone.journal_url, "--status", "blocked")
    assert "blocked (credential.rejected)" in listing.out, listing.out


def test_inspect_of_a_refused_child_shows_no_receipt_age(
        dpone: Dpone, receiver: ReceiverThread, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 401 holds only its HTTP status, no receipt id: there is no receipt to age or expire."""
    monkeypatch.setenv(TOKEN_ENV, WRONG)
    parent_id = _stop(dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json"),
                      "credential.rejected")

    waiting = _waiting_child(dpone, parent_id, "credential.rejected")
    text = dpone.inspect(parent_id)

    assert waiting["receipt"] == {"http_status": 401}
    assert "receipt_age_s" not in waiting and "receipt_ttl_horizon" not in waiting
    assert text.code == 0, text.out + text.err
    assert "error credential.rejected" in text.out
    assert "receipt age" not in text.out and "certified until" not in text.out
