"""Bearer authentication: 401 without the right token, and the token is never echoed."""

from __future__ import annotations

import json

import httpx
import pytest

from dpone.receiver import ManualClock, ReceiverConfig, ReceiverThread
from support.receiver import (
    JOBS_PATH,
    PROCESSING_SECONDS,
    SYNC_PATH,
    TOKEN,
    install,
    job,
    ledger,
    ndjson,
    post_batch,
    rule,
    submit_job,
)

WRONG = ["", "Bearer", "Bearer wrong-token", f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}"]


def _anonymous(receiver: ReceiverThread) -> httpx.Client:
    return httpx.Client(base_url=receiver.base_url, trust_env=False, timeout=5.0)


@pytest.mark.parametrize("authorization", WRONG, ids=["none", "bare-scheme", "wrong", "basic", "longer",
                                                      "shorter"])
def test_delivery_and_control_endpoints_need_the_token(receiver: ReceiverThread, authorization: str) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    with _anonymous(receiver) as http:
        answers = [
            http.post(SYNC_PATH, content=ndjson([{"a": 1}]),
                      headers={**headers, "X-Delivery-Key": "k", "Content-Type": "application/x-ndjson"}),
            http.post(JOBS_PATH, content=b"", headers=headers),
            http.get(f"{JOBS_PATH}/job-0badc0de-000001", headers=headers),
            http.get("/mock/_ledger", headers=headers),
            http.post("/mock/_faults", json=[], headers=headers),
            http.post("/mock/_reset", headers=headers),
        ]
    for answer in answers:
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == "Bearer"
        assert answer.json()["error"] == "unauthorized"
    assert receiver.state.ledger.mutations == ()


def test_rejected_requests_are_counted_and_consume_no_fault(receiver: ReceiverThread,
                                                            client: httpx.Client) -> None:
    install(client, rule("status", "/mock/v1/batches/", status=500))
    with _anonymous(receiver) as http:
        assert http.post(SYNC_PATH, content=b"{}\n").status_code == 401
    assert ledger(client)["requests"] == {f"POST {SYNC_PATH}": 1}
    assert len(client.get("/mock/_faults").json()["pending"]) == 1


def test_token_never_appears_in_any_answer_or_the_ledger(receiver: ReceiverThread, client: httpx.Client,
                                                         clock: ManualClock) -> None:
    seen: list[httpx.Response] = []
    install(client, rule("status", "/mock/v1/batches/", status=429, retry_after=1),
            rule("partial", "/mock/v1/batches/", accepted_rows=1))
    seen.append(post_batch(client, "k-1", ndjson([{"a": TOKEN[:3]}, {"a": 2}])))
    seen.append(post_batch(client, "k-1", ndjson([{"a": 1}, {"a": 2}])))
    seen.append(post_batch(client, "k-1", b"{broken\n"))
    seen.append(submit_job(client, "f.csv.gz"))
    seen.append(submit_job(client, "f.csv.gz"))
    clock.advance(PROCESSING_SECONDS)
    seen.append(job(client, seen[-2].json()["job_id"]))
    seen.append(client.get("/mock/_faults"))
    seen.append(client.post("/mock/_faults", json=[{"fault": "nope"}]))
    seen.append(client.get("/mock/_ledger", params={"rows": "1"}))
    with _anonymous(receiver) as http:
        seen.append(http.get("/mock/_ledger", headers={"Authorization": f"Bearer {TOKEN}-wrong"}))
        seen.append(http.get("/mock/_ledger", headers={"Authorization": f"Basic {TOKEN}"}))

    for response in seen:
        text = response.text + json.dumps(dict(response.headers))
        assert TOKEN not in text
    assert TOKEN not in json.dumps(receiver.state.ledger.snapshot(with_rows=True))
    assert TOKEN not in repr(receiver.config)


def test_without_a_configured_token_no_header_is_needed(clock: ManualClock) -> None:
    with ReceiverThread(ReceiverConfig(clock=clock)) as open_receiver, _anonymous(open_receiver) as http:
        assert post_batch(http, "k", ndjson([{"a": 1}])).status_code == 200
        assert ledger(http)["rows_total"] == 1
