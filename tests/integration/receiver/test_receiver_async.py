"""Asynchronous dataset jobs: multipart CSV+gzip submit, time-driven phases, filename fence."""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime

import httpx

from dpone.receiver import ManualClock, ReceiverConfig, ReceiverThread
from support.receiver import (
    CSV_ROWS,
    JOBS_PATH,
    PROCESSING_SECONDS,
    TOKEN,
    csv_gz,
    job,
    ledger,
    multipart,
    submit_job,
)

FILENAME = "3f9a" + "0" * 60 + ".csv.gz"


def test_job_lifecycle_applies_rows_once_at_completion(client: httpx.Client, clock: ManualClock) -> None:
    due = datetime.fromtimestamp(clock() + PROCESSING_SECONDS, tz=UTC)
    submitted = submit_job(client, FILENAME)
    assert submitted.status_code == 202
    job_id = submitted.json()["job_id"]
    assert submitted.headers["location"] == f"{JOBS_PATH}/{job_id}"

    assert job(client, job_id).json() == {"job_id": job_id, "filename": FILENAME,
                                          "phase": "pending", "rows_accepted": 0,
                                          "rows_rejected": 0}
    clock.advance(PROCESSING_SECONDS * 0.6)
    assert job(client, job_id).json()["phase"] == "running"
    assert ledger(client)["mutations"] == []

    clock.advance(PROCESSING_SECONDS)
    done = job(client, job_id).json()
    assert done == {"job_id": job_id, "filename": FILENAME, "phase": "complete",
                    "rows_accepted": 3, "rows_rejected": 0}
    for _ in range(3):
        assert job(client, job_id).json() == done
    state = ledger(client, rows=True)
    (mutation,) = state["mutations"]
    assert mutation["kind"] == "async"
    assert mutation["key"] == FILENAME
    assert mutation["rows"] == 3
    assert mutation["records"] == CSV_ROWS  # null and "" stay distinct; Cyrillic, quotes, newline
    assert state["rows_by_key"] == {FILENAME: 3}
    assert state["duplicate_mutations"] == 0
    assert mutation["applied_at"] == due.strftime("%Y-%m-%dT%H:%M:%S.") + f"{due.microsecond // 1000:03d}Z"


def test_due_job_takes_effect_without_being_polled(client: httpx.Client, clock: ManualClock) -> None:
    submit_job(client, FILENAME)
    clock.advance(PROCESSING_SECONDS)
    assert ledger(client)["rows_total"] == 3


def test_duplicate_filename_answers_409_with_the_original_job_and_applies_nothing(
        client: httpx.Client, clock: ManualClock) -> None:
    original = submit_job(client, FILENAME).json()["job_id"]
    duplicate = submit_job(client, FILENAME)
    assert duplicate.status_code == 409
    assert duplicate.json() == {"job_id": original, "filename": FILENAME}

    clock.advance(PROCESSING_SECONDS)
    after = submit_job(client, FILENAME)  # still fenced after completion
    assert after.json() == {"job_id": original, "filename": FILENAME}
    state = ledger(client)
    assert state["mutations_total"] == 1
    assert state["rows_total"] == 3
    assert state["duplicate_mutations"] == 0


def test_unknown_job_is_404(client: httpx.Client) -> None:
    assert job(client, "job-999999").status_code == 404


def test_job_ids_never_repeat_across_a_restart() -> None:
    """A receipt issued before a restart names no job of the restarted receiver (404)."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    issued: list[str] = []
    for start, filename in enumerate((FILENAME, "7b" + "1" * 62 + ".csv.gz")):
        with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0)) as running, \
                httpx.Client(base_url=running.base_url, headers=headers, trust_env=False) as http:
            for earlier in issued:
                assert job(http, earlier).status_code == 404
            issued.append(submit_job(http, filename).json()["job_id"])
            assert job(http, issued[-1]).json()["filename"] == filename
        assert re.fullmatch(r"job-[0-9a-f]{8}-000001", issued[-1]), (start, issued)
    assert issued[0] != issued[1]


def test_a_pinned_boot_id_repeats_job_ids_as_an_unsafe_receiver_would() -> None:
    issued = []
    for _ in range(2):
        with ReceiverThread(ReceiverConfig(token=TOKEN, boot_id="0badc0de")) as running, \
                httpx.Client(base_url=running.base_url, headers={"Authorization": f"Bearer {TOKEN}"},
                             trust_env=False) as http:
            issued.append(submit_job(http, FILENAME).json()["job_id"])
    assert issued == ["job-0badc0de-000001", "job-0badc0de-000001"]


def test_malformed_submits_are_refused_without_a_job(client: httpx.Client) -> None:
    def post(body: bytes, content_type: str) -> int:
        return client.post(JOBS_PATH, content=body, headers={"Content-Type": content_type}).status_code

    body, content_type = multipart(FILENAME, csv_gz())
    assert post(body, "application/octet-stream") == 415
    assert post(body, "multipart/form-data") == 400  # no boundary
    assert post(body[:-12], content_type) == 400  # no closing delimiter
    assert post(*multipart(None, csv_gz())) == 400  # file part without a filename
    assert post(*multipart("../etc/passwd", csv_gz())) == 400
    assert post(*multipart(FILENAME, csv_gz(), file_type="text/csv")) == 415
    assert post(*multipart(FILENAME, b"not gzip")) == 400
    assert post(*multipart(FILENAME, csv_gz("a,b\n1\n"))) == 400  # ragged CSV
    assert post(*multipart(FILENAME, csv_gz(), range_start="yesterday")) == 400
    assert post(*multipart(FILENAME, csv_gz(), range_start="2026-09-05")) == 400  # after range_end
    assert post(*multipart(FILENAME, csv_gz(), extra=[("range_end", "2026-09-04")])) == 400
    assert post(*multipart(FILENAME, csv_gz(), extra=[("comment", "x")])) == 400
    assert ledger(client)["mutations"] == []
    assert submit_job(client, FILENAME).status_code == 202  # none of them took the filename


def test_real_clock_job_completes_quickly() -> None:
    with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0.05)) as running, httpx.Client(
            base_url=running.base_url, headers={"Authorization": f"Bearer {TOKEN}"},
            trust_env=False) as http:
        job_id = submit_job(http, FILENAME).json()["job_id"]
        deadline = time.monotonic() + 5
        phases = []
        while time.monotonic() < deadline:
            phases.append(job(http, job_id).json()["phase"])
            if phases[-1] == "complete":
                break
            time.sleep(0.01)
        assert phases[-1] == "complete"
        assert set(phases) <= {"pending", "running", "complete"}
        assert running.state.ledger.duplicate_mutations == 0
        assert [m.rows for m in running.state.ledger.mutations] == [3]


def test_zero_processing_time_completes_at_submit(clock: ManualClock) -> None:
    config = ReceiverConfig(token=TOKEN, processing_seconds=0, clock=clock)
    with ReceiverThread(config) as running, httpx.Client(
            base_url=running.base_url, headers={"Authorization": f"Bearer {TOKEN}"},
            trust_env=False) as http:
        job_id = submit_job(http, FILENAME).json()["job_id"]
        assert job(http, job_id).json()["phase"] == "complete"


def test_concurrent_submits_of_one_filename_create_one_job(receiver: ReceiverThread,
                                                           client: httpx.Client) -> None:
    big = csv_gz("a,b\n" + "x,y\n" * 50_000)  # parsing takes long enough for submits to overlap
    answers: list[httpx.Response] = []

    def submit() -> None:
        with httpx.Client(base_url=receiver.base_url, headers={"Authorization": f"Bearer {TOKEN}"},
                          timeout=30.0, trust_env=False) as http:
            answers.append(submit_job(http, FILENAME, big))

    workers = [threading.Thread(target=submit) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)

    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [202, 409, 409, 409]
    job_ids = {answer.json()["job_id"] for answer in answers}
    assert len(job_ids) == 1
