"""GET /mock/_requests: every delivery request the receiver handled, as the wire carried it
(request line, headers, body size and digest), the credential redacted; bounded, authenticated,
never counted, cleared by reset."""

from __future__ import annotations

import hashlib

import httpx

from dpone.receiver import ReceiverThread
from dpone.receiver._exchanges import REDACTED, ExchangeLog
from support.receiver import JOBS_PATH, SYNC_PATH, TOKEN, csv_gz, ledger, multipart, ndjson


def _requests(client: httpx.Client) -> list[dict[str, object]]:
    answer = client.get("/mock/_requests")
    assert answer.status_code == 200
    requests: list[dict[str, object]] = answer.json()["requests"]
    return requests


def test_batches_and_job_submits_are_recorded_as_received(receiver: ReceiverThread,
                                                          client: httpx.Client) -> None:
    batch = ndjson([{"a": 1}, {"a": "ж"}])
    job, content_type = multipart("sha256-file", csv_gz())
    client.post(SYNC_PATH, params=[("mode", "append"), ("q", "a b")], content=batch,
                headers={"X-Delivery-Key": "k-1", "Content-Type": "application/x-ndjson"})
    submitted = client.post(JOBS_PATH, content=job, headers={"Content-Type": content_type})
    client.get(f"{JOBS_PATH}/{submitted.json()['job_id']}")  # a poll: not a delivery request

    first, second = _requests(client)

    assert (first["method"], first["path"]) == ("POST", f"{SYNC_PATH}?mode=append&q=a+b")
    assert (first["body_bytes"], first["body_digest"]) == (
        len(batch), "sha256:" + hashlib.sha256(batch).hexdigest())
    assert ["x-delivery-key", "k-1"] in first["headers"]
    assert ["authorization", REDACTED] in first["headers"]
    assert (second["method"], second["path"], second["body_bytes"]) == ("POST", JOBS_PATH,
                                                                         len(job))
    assert ["content-type", content_type] in second["headers"]


def test_the_token_is_never_kept_or_served(receiver: ReceiverThread,
                                           client: httpx.Client) -> None:
    client.post(SYNC_PATH, content=ndjson([{"a": 1}]),
                headers={"X-Delivery-Key": "k", "Content-Type": "application/x-ndjson",
                         "Proxy-Authorization": f"Basic {TOKEN}"})
    served = client.get("/mock/_requests").text
    assert TOKEN not in served and TOKEN not in repr(receiver.state.exchanges.snapshot())
    assert served.count(REDACTED) == 2


def test_it_needs_the_token_is_never_counted_and_reset_clears_it(
        receiver: ReceiverThread, client: httpx.Client) -> None:
    client.post(SYNC_PATH, content=ndjson([{"a": 1}]),
                headers={"X-Delivery-Key": "k", "Content-Type": "application/x-ndjson"})
    with httpx.Client(base_url=receiver.base_url, trust_env=False, timeout=5.0) as anonymous:
        assert anonymous.get("/mock/_requests").status_code == 401
    assert len(_requests(client)) == 1
    assert ledger(client)["requests"] == {f"POST {SYNC_PATH}": 1}

    assert client.post("/mock/_reset").status_code == 200

    assert _requests(client) == []


def test_only_the_newest_requests_are_kept() -> None:
    log = ExchangeLog(limit=2)
    for number in range(3):
        log.record("POST", f"/p/{number}".encode(), [(b"authorization", b"Bearer x")], b"")
    assert [entry["path"] for entry in log.snapshot()] == ["/p/1", "/p/2"]
