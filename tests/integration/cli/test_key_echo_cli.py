"""A receipt id reused after a receiver restart never turns into a false success (both journals).

Delivery A waits on its job; the receiver restarts; delivery B (another interval, the same row
count) gets a job there; `dpone delivery resume --operation-id A --apply --wait` must not print
completed / FULLY_APPLIED nor exit 0. A restarted mock receiver never repeats a job id (404:
REST_DELIVERY_RECEIPT_EXPIRED); a receiver that does repeat it answers about B's job, whose
filename is not A's key (REST_DELIVERY_PROTOCOL_UNKNOWN). Both exit 4, the effect UNKNOWN.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import ONE_ASYNC_CHILD, TOKEN, TOKEN_ENV, Dpone, bind_registry

OTHER_INTERVAL_SAME_ROWS = ("2026-08-08", "2026-08-11")
"""190 rows in one child, like ONE_ASYNC_CHILD."""
PENDING_FOR_AN_HOUR = 3600.0
SOON = 0.2


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


@contextmanager
def _receiver(processing_seconds: float, *, port: int = 0,
              boot_id: str | None = None) -> Iterator[ReceiverThread]:
    config = ReceiverConfig(token=TOKEN, processing_seconds=processing_seconds, boot_id=boot_id)
    with ReceiverThread(config, port=port) as running:
        yield running


def _pending_then_receiver_stops(
        tmp_path: Path, journal_url: str, boot_id: str | None) -> tuple[Dpone, str, str, int]:
    """Deliver A without --wait (its job stays pending), then stop the receiver.
    Returns (dpone, A's parent id, A's job id, the receiver's port)."""
    with _receiver(PENDING_FOR_AN_HOUR, boot_id=boot_id) as first:
        port = first.port
        dpone = Dpone(bind_registry(tmp_path, first.base_url), tmp_path / "state",
                      journal=journal_url)
        a = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
        assert a.code == 0, a.out + a.err
        assert a.json()["status"] == "pending"
        a_id = str(a.json()["parent_id"])
        a_job = str(a.json()["children"][0]["receipt"]["id"])
    return dpone, a_id, a_job, port


def _deliver_b(dpone: Dpone, receiver: ReceiverThread) -> str:
    """B is another operator's delivery to the same receiver (its own journal: this journal's
    single remote-job slot is still held by A's job)."""
    other = Dpone(dpone.registry, dpone.state.parent / "other-operator")
    b = other.deliver("measurements_async", OTHER_INTERVAL_SAME_ROWS, "--wait", "--format", "json")
    assert b.code == 0, b.out + b.err
    document = b.json()
    assert document["status"] == "completed"
    assert [c["rows"] for c in document["children"]] == [190]
    assert receiver.state.ledger.snapshot()["rows_total"] == 190
    return str(document["children"][0]["receipt"]["id"])


def _refuses_success(run_out: str, code: int, expected: str) -> None:
    assert code == 4, run_out
    assert "completed" not in run_out and "FULLY_APPLIED" not in run_out
    assert expected in run_out


def test_resume_after_a_receiver_restart_is_never_a_false_success(
        tmp_path: Path, journal_url: str) -> None:
    dpone, a_id, a_job, port = _pending_then_receiver_stops(
        tmp_path, journal_url, boot_id=None)
    with _receiver(SOON, port=port) as restarted:
        b_job = _deliver_b(dpone, restarted)
        assert b_job != a_job  # a restarted receiver hands out new ids

        resumed = dpone.resume(a_id, "--apply", "--wait")

        _refuses_success(resumed.out, resumed.code, "REST_DELIVERY_RECEIPT_EXPIRED")
        assert "remote effect UNKNOWN" in resumed.out
        requests = restarted.state.ledger.snapshot()["requests"]
        assert requests.get(f"GET /mock/v1/dataset-jobs/{a_job}") == 1
        assert sum(n for line, n in requests.items() if line.startswith("POST ")) == 1  # B's only

    inspected = dpone.inspect(a_id, "--format", "json")
    assert inspected.code == 0, inspected.out + inspected.err
    (child,) = inspected.json()["children"]
    assert child["axes"]["remote_effect"] == "UNKNOWN"
    assert child["axes"]["checkpoint_state"] == "BLOCKED"
    assert inspected.json()["checkpoint_frontier"] == 0


def test_resume_against_a_receiver_that_reuses_job_ids_is_protocol_unknown(
        tmp_path: Path, journal_url: str) -> None:
    dpone, a_id, a_job, port = _pending_then_receiver_stops(
        tmp_path, journal_url, boot_id="0badc0de")
    with _receiver(SOON, port=port, boot_id="0badc0de") as restarted:
        b_job = _deliver_b(dpone, restarted)
        assert b_job == a_job  # the unsafe receiver numbered its jobs from the start again

        resumed = dpone.resume(a_id, "--apply", "--wait", "--format", "json")

        assert resumed.code == 4, resumed.out + resumed.err
        document = resumed.json()
        assert document["status"] == "blocked"
        assert document["blocked"]["code"] == "REST_DELIVERY_PROTOCOL_UNKNOWN"
        assert document["blocked"]["remote_effect"] == "UNKNOWN"
        assert document["blocked"]["evidence"]["key_echo"] == "mismatch"
        assert document["checkpoint_frontier"] == 0
        (child,) = document["children"]
        assert child["axes"]["remote_effect"] == "UNKNOWN"
        assert child["receipt"]["key_echo"] == "mismatch"
        assert child["receipt"].get("accepted_rows") in (None, 0)  # B's counters are not A's
        ledger = restarted.state.ledger.snapshot()
        assert ledger["mutations_total"] == 1 and ledger["rows_total"] == 190  # B's only
        again = dpone.resume(a_id, "--apply", "--wait")
        _refuses_success(again.out, again.code, "REST_DELIVERY_PROTOCOL_UNKNOWN")
        assert "key-echo-mismatch" in again.out
        assert restarted.state.ledger.snapshot()["requests"] == ledger["requests"]  # no resend

    inspected = dpone.inspect(a_id)
    assert inspected.code == 0, inspected.out + inspected.err
    assert "verification rests on counters and a certified key echo" in inspected.out
    assert "REST_DELIVERY_PROTOCOL_UNKNOWN" in inspected.out


@pytest.mark.parametrize(("workload", "echo"), [
    ("measurements_async", True), ("measurements_async", False), ("measurements_sync", False)],
    ids=["async-key-echo", "async-counters-only", "sync"])
def test_inspect_says_what_verification_rests_on(
        registry: Path, tmp_path: Path, journal_url: str, workload: str, echo: bool) -> None:
    if not echo and workload == "measurements_async":
        profile = registry / "profiles" / "mock.dataset-jobs@1.yaml"
        text = profile.read_text(encoding="utf-8")
        line = "    key_echo: {body_json_pointer: /filename, form: payload_filename}\n"
        assert line in text
        profile.write_text(text.replace(line, ""), encoding="utf-8")
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)
    run = dpone.deliver(workload, ONE_ASYNC_CHILD, "--wait", "--format", "json")
    assert run.code == 0, run.out + run.err
    parent_id = str(run.json()["parent_id"])

    document = dpone.inspect(parent_id, "--format", "json").json()
    text = dpone.inspect(parent_id).out
    unknown = dpone("delivery", "inspect", "--operation-id", parent_id, "--journal", journal_url,
                    "--plans", str(tmp_path / "no-plans"))

    basis = document["verification"]
    if echo:
        assert basis == {"rests_on": "counters_and_key_echo", "counters_from": "poll_response",
                         "key_echo": {"source": "body /filename", "form": "payload_filename"}}
        assert ("verification rests on counters and a certified key echo: every poll answer "
                "carries the sealed payload filename (body /filename)") in text
    elif workload == "measurements_async":
        assert basis == {"rests_on": "counters_only", "counters_from": "poll_response",
                         "key_echo": None}
        assert ("verification rests on counters only: the profile certifies no key echo, so a "
                "poll answer is not proven to describe this child's job") in text
    else:
        assert basis == {"rests_on": "counters_only", "counters_from": "submit_response",
                         "key_echo": None}
        assert "verification rests on counters only: those of the answer to each submit" in text
    assert unknown.code == 0, unknown.out + unknown.err
    assert "verification basis unknown: the plan is not in the plan store" in unknown.out
