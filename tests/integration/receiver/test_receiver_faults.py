"""Every injected fault, observed by a real HTTP client over loopback."""

from __future__ import annotations

import email.utils
import threading
import time

import httpx
import pytest

from dpone.receiver import ManualClock, ReceiverThread
from support.receiver import (
    JOBS_PATH,
    PROCESSING_SECONDS,
    SYNC_PATH,
    install,
    job,
    ledger,
    ndjson,
    post_batch,
    rule,
    submit_job,
)

ROWS = [{"n": 1, "t": "один"}, {"n": 2, "t": None}, {"n": 3, "t": ""}]
FILENAME = "b7" + "1" * 62 + ".csv.gz"


def _wait_for(predicate: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return
        time.sleep(0.01)
    raise AssertionError("condition not reached")


# commit_then_drop -----------------------------------------------------------------------------

def test_commit_then_drop_sync_client_sees_no_status_but_the_mutation_happened(
        client: httpx.Client) -> None:
    install(client, rule("commit_then_drop", "/mock/v1/batches/"))

    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)) as raised:
        post_batch(client, "k-1", ndjson(ROWS))

    assert not isinstance(raised.value, httpx.HTTPStatusError)
    state = ledger(client)
    assert [(m["key"], m["rows"]) for m in state["mutations"]] == [("k-1", 3)]
    assert state["requests"] == {f"POST {SYNC_PATH}": 1}
    assert post_batch(client, "k-2", ndjson(ROWS)).status_code == 200  # one-shot


def test_commit_then_drop_async_creates_the_job_and_a_resend_is_fenced_by_filename(
        client: httpx.Client, clock: ManualClock) -> None:
    install(client, rule("commit_then_drop", JOBS_PATH))

    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        submit_job(client, FILENAME)
    resend = submit_job(client, FILENAME)

    assert resend.status_code == 409
    job_id = resend.json()["job_id"]
    assert resend.json()["filename"] == FILENAME
    clock.advance(PROCESSING_SECONDS)
    assert job(client, job_id).json()["phase"] == "complete"
    state = ledger(client)
    assert state["mutations_total"] == 1
    assert state["duplicate_mutations"] == 0


def test_commit_then_drop_on_a_poll_drops_only_that_answer(client: httpx.Client) -> None:
    job_id = submit_job(client, FILENAME).json()["job_id"]
    install(client, rule("commit_then_drop", f"{JOBS_PATH}/", method="GET"))
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        job(client, job_id)
    assert job(client, job_id).json()["phase"] == "pending"


# status ---------------------------------------------------------------------------------------

def test_429_with_delta_retry_after_has_no_effect(client: httpx.Client) -> None:
    install(client, rule("status", "/mock/v1/batches/", status=429, retry_after=7))

    response = post_batch(client, "k-1", ndjson(ROWS))

    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert ledger(client)["mutations"] == []
    assert post_batch(client, "k-1", ndjson(ROWS)).status_code == 200


def test_429_with_http_date_retry_after(client: httpx.Client, clock: ManualClock) -> None:
    install(client, rule("status", "/mock/v1/batches/", status=429, retry_after_date_in=30),
            rule("status", "/mock/v1/batches/", status=429, retry_after="Wed, 21 Oct 2026 07:28:00 GMT"))

    computed = post_batch(client, "k-1", ndjson(ROWS))
    verbatim = post_batch(client, "k-1", ndjson(ROWS))

    when = email.utils.parsedate_to_datetime(computed.headers["retry-after"])
    assert when.timestamp() == int(clock()) + 30
    assert computed.headers["retry-after"].endswith(" GMT")
    assert verbatim.headers["retry-after"] == "Wed, 21 Oct 2026 07:28:00 GMT"
    assert ledger(client)["mutations"] == []


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_before_commit_has_no_effect(client: httpx.Client, status: int) -> None:
    install(client, rule("status", "/mock/v1/batches/", status=status))
    assert post_batch(client, "k-1", ndjson(ROWS)).status_code == status
    assert ledger(client)["mutations"] == []


def test_5xx_after_commit_applied_the_mutation(client: httpx.Client) -> None:
    install(client, rule("status", "/mock/v1/batches/", status=503, after_commit=True))
    assert post_batch(client, "k-1", ndjson(ROWS)).status_code == 503
    assert ledger(client)["rows_by_key"] == {"k-1": 3}


def test_status_on_a_poll(client: httpx.Client) -> None:
    job_id = submit_job(client, FILENAME).json()["job_id"]
    install(client, rule("status", f"{JOBS_PATH}/", method="GET", status=503, retry_after=1))
    assert job(client, job_id).status_code == 503
    assert job(client, job_id).status_code == 200


# partial --------------------------------------------------------------------------------------

def test_partial_sync_applies_only_n_rows(client: httpx.Client) -> None:
    install(client, rule("partial", "/mock/v1/batches/", accepted_rows=1))

    response = post_batch(client, "k-1", ndjson(ROWS))

    assert response.status_code == 200
    assert response.json()["accepted_rows"] == 1
    assert response.json()["rejected_rows"] == 2
    (mutation,) = ledger(client, rows=True)["mutations"]
    assert mutation["records"] == ROWS[:1]


def test_partial_async_ends_incomplete_with_counts(client: httpx.Client, clock: ManualClock) -> None:
    install(client, rule("partial", JOBS_PATH, accepted_rows=2))
    job_id = submit_job(client, FILENAME).json()["job_id"]
    clock.advance(PROCESSING_SECONDS)

    assert job(client, job_id).json() == {"job_id": job_id, "filename": FILENAME,
                                          "phase": "incomplete", "rows_accepted": 2,
                                          "rows_rejected": 1}
    assert ledger(client)["rows_by_key"] == {FILENAME: 2}


# expire_receipt -------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [404, 410])
def test_expire_receipt_on_poll_answers_gone_from_then_on_but_the_job_still_applies(
        client: httpx.Client, clock: ManualClock, status: int) -> None:
    job_id = submit_job(client, FILENAME).json()["job_id"]
    assert job(client, job_id).status_code == 200
    install(client, rule("expire_receipt", f"{JOBS_PATH}/", method="GET", status=status))

    assert job(client, job_id).status_code == status
    clock.advance(PROCESSING_SECONDS)
    assert job(client, job_id).status_code == status
    assert job(client, job_id).json()["error"] == "receipt_expired"
    assert ledger(client)["rows_by_key"] == {FILENAME: 3}  # expiry is not rollback
    assert submit_job(client, FILENAME).json()["job_id"] == job_id  # and not a licence to resend


def test_expire_receipt_on_submit_defaults_to_410(client: httpx.Client) -> None:
    install(client, rule("expire_receipt", JOBS_PATH))
    job_id = submit_job(client, FILENAME).json()["job_id"]
    assert job(client, job_id).status_code == 410


# cancel_job / fail_job ------------------------------------------------------------------------

def test_cancel_job_while_running_applies_nothing_by_default(client: httpx.Client,
                                                             clock: ManualClock) -> None:
    job_id = submit_job(client, FILENAME).json()["job_id"]
    clock.advance(PROCESSING_SECONDS * 0.6)
    install(client, rule("cancel_job", f"{JOBS_PATH}/", method="GET"))

    assert job(client, job_id).json()["phase"] == "cancelled"
    clock.advance(PROCESSING_SECONDS)
    assert job(client, job_id).json() == {"job_id": job_id, "filename": FILENAME,
                                          "phase": "cancelled", "rows_accepted": 0,
                                          "rows_rejected": 0}
    state = ledger(client)
    assert state["rows_total"] == 0
    assert state["mutations_total"] == 1  # an empty application, stamped at cancellation


def test_cancel_job_on_submit_with_partial_application(client: httpx.Client, clock: ManualClock) -> None:
    install(client, rule("cancel_job", JOBS_PATH, apply_rows=2))
    job_id = submit_job(client, FILENAME).json()["job_id"]
    assert job(client, job_id).json()["phase"] == "pending"
    clock.advance(PROCESSING_SECONDS)

    assert job(client, job_id).json() == {"job_id": job_id, "filename": FILENAME,
                                          "phase": "cancelled", "rows_accepted": 2,
                                          "rows_rejected": 0}
    assert ledger(client)["rows_by_key"] == {FILENAME: 2}


def test_fail_job_ends_in_error(client: httpx.Client, clock: ManualClock) -> None:
    install(client, rule("fail_job", JOBS_PATH))
    job_id = submit_job(client, FILENAME).json()["job_id"]
    clock.advance(PROCESSING_SECONDS)
    assert job(client, job_id).json()["phase"] == "error"
    assert ledger(client)["rows_total"] == 0


# slow -----------------------------------------------------------------------------------------

def test_slow_delays_the_response(client: httpx.Client) -> None:
    install(client, rule("slow", "/mock/v1/batches/", delay_ms=300))
    started = time.monotonic()
    response = post_batch(client, "k-1", ndjson(ROWS))
    assert response.status_code == 200
    assert time.monotonic() - started >= 0.3


def test_slow_beyond_the_client_read_timeout_still_commits(client: httpx.Client,
                                                            receiver: ReceiverThread) -> None:
    install(client, rule("slow", "/mock/v1/batches/", delay_ms=400))
    with pytest.raises(httpx.ReadTimeout):
        post_batch(client, "k-1", ndjson(ROWS), timeout=httpx.Timeout(5.0, read=0.1))
    _wait_for(lambda: len(receiver.state.ledger.mutations) == 1)


# refuse_before_read ---------------------------------------------------------------------------

def test_refuse_before_read_answers_503_without_effect(client: httpx.Client) -> None:
    install(client, rule("refuse_before_read", "/mock/v1/batches/", retry_after=2))

    response = post_batch(client, "k-1", ndjson(ROWS))

    assert response.status_code == 503
    assert response.headers["retry-after"] == "2"
    assert response.headers["connection"] == "close"
    assert ledger(client)["mutations"] == []
    assert post_batch(client, "k-1", ndjson(ROWS)).status_code == 200


def test_refuse_before_read_does_not_wait_for_the_body(receiver: ReceiverThread,
                                                       client: httpx.Client) -> None:
    install(client, rule("refuse_before_read", JOBS_PATH, status=503))
    release = threading.Event()

    def body() -> object:
        yield b"--x\r\n"
        release.wait(5)  # the rest of the body is never needed for the answer
        yield b"tail"

    def send() -> httpx.Response:
        with httpx.Client(base_url=receiver.base_url, headers=dict(client.headers),
                          trust_env=False, timeout=5.0) as http:
            return http.post(JOBS_PATH, content=body(),
                             headers={"Content-Type": "multipart/form-data; boundary=x"})

    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(_outcome(send)))
    worker.start()
    _wait_for(lambda: client.get("/mock/_faults").json()["pending"] == [])
    release.set()
    worker.join(10)
    assert result and (result[0] == 503 or isinstance(result[0], httpx.TransportError))
    assert ledger(client)["mutations"] == []


def _outcome(send: object) -> object:
    try:
        return send().status_code  # type: ignore[operator]
    except httpx.TransportError as exc:
        return exc


# rules ----------------------------------------------------------------------------------------

def test_rules_fire_in_order_for_their_times_and_are_listed(client: httpx.Client) -> None:
    install(client, rule("status", "/mock/v1/batches/", status=500, times=2),
            rule("status", "/mock/v1/batches/", status=502))
    assert len(client.get("/mock/_faults").json()["pending"]) == 2

    statuses = [post_batch(client, "k", ndjson(ROWS)).status_code for _ in range(4)]

    assert statuses == [500, 500, 502, 200]
    assert client.get("/mock/_faults").json()["pending"] == []


def test_rules_match_method_and_prefix_and_only_where_the_fault_applies(client: httpx.Client) -> None:
    install(client, rule("partial", f"{JOBS_PATH}/", method="GET", accepted_rows=1),
            rule("status", "/mock/v1/batches/other", status=500))
    assert post_batch(client, "k", ndjson(ROWS)).status_code == 200
    job_id = submit_job(client, FILENAME).json()["job_id"]
    assert job(client, job_id).status_code == 200
    assert len(client.get("/mock/_faults").json()["pending"]) == 2  # neither consumed


@pytest.mark.parametrize("bad", [
    {"fault": "explode", "match": {"path_prefix": "/mock/v1/"}},
    {"fault": "status", "match": {"path_prefix": "/mock/v1/"}},
    {"fault": "status", "status": 200, "match": {"path_prefix": "/mock/v1/"}},
    {"fault": "status", "status": 429, "retry_after": 1, "retry_after_date_in": 1,
     "match": {"path_prefix": "/mock/v1/"}},
    {"fault": "slow", "delay_ms": -1, "match": {"path_prefix": "/mock/v1/"}},
    {"fault": "slow", "delay_ms": 1, "match": {"path_prefix": "/mock/_ledger"}},
    {"fault": "partial", "accepted_rows": 1, "match": {"path_prefix": "/mock/v1/", "method": "PUT"}},
    {"fault": "expire_receipt", "status": 500, "match": {"path_prefix": "/mock/v1/"}},
    {"fault": "commit_then_drop", "times": 0, "match": {"path_prefix": "/mock/v1/"}},
    {"fault": "commit_then_drop", "colour": "red", "match": {"path_prefix": "/mock/v1/"}},
])
def test_invalid_rules_are_refused_and_nothing_is_installed(client: httpx.Client,
                                                            bad: dict[str, object]) -> None:
    good = rule("status", "/mock/v1/", status=500)
    response = client.post("/mock/_faults", json=[good, bad])
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_fault_rules"
    assert client.get("/mock/_faults").json()["pending"] == []


def test_control_endpoints_are_never_faulted_or_counted_and_reset_clears_everything(
        client: httpx.Client) -> None:
    install(client, rule("refuse_before_read", "/mock/v1/"))
    assert client.post("/mock/_faults", content=b"not json").status_code == 400
    post_batch(client, "k", ndjson(ROWS))  # consumes the rule
    post_batch(client, "k", ndjson(ROWS))
    submit_job(client, FILENAME)
    install(client, rule("status", "/mock/v1/", status=500))

    assert client.post("/mock/_reset").json() == {"reset": True}

    assert client.get("/mock/_faults").json()["pending"] == []
    state = ledger(client)
    assert state["mutations"] == [] and state["requests"] == {} and state["duplicate_mutations"] == 0
    assert submit_job(client, FILENAME).status_code == 202  # the filename fence was cleared too
