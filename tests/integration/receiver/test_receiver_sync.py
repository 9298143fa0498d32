"""Synchronous NDJSON batches over loopback HTTP: applied as sent, never deduplicated."""

from __future__ import annotations

import httpx

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.receiver import NDJSON, SYNC_PATH, TOKEN, ledger, ndjson, post_batch

ROWS = [
    {"day": "2026-09-01", "sensor": "s-1", "value": 1.5, "note": "Привет, мир"},
    {"day": "2026-09-01", "sensor": "s-2", "value": None, "note": ""},
    {"day": "2026-09-02", "sensor": "s-3", "value": -2, "note": None},
]


def test_batch_with_cyrillic_and_nulls_is_applied_exactly_once(client: httpx.Client) -> None:
    response = post_batch(client, "sha256:" + "a" * 64, ndjson(ROWS))

    assert response.status_code == 200
    body = response.json()
    assert body["accepted_rows"] == 3
    assert body["rejected_rows"] == 0
    assert body["batch_id"].startswith("batch-")
    state = ledger(client, rows=True)
    (mutation,) = state["mutations"]
    assert mutation["kind"] == "sync"
    assert mutation["resource"] == "readings"
    assert mutation["key"] == "sha256:" + "a" * 64
    assert mutation["rows"] == 3
    assert mutation["records"] == ROWS
    assert mutation["applied_at"].endswith("Z")
    assert state["rows_by_key"] == {"sha256:" + "a" * 64: 3}
    assert state["duplicate_mutations"] == 0
    assert state["requests"] == {f"POST {SYNC_PATH}": 1}


def test_ledger_lists_no_rows_unless_asked(client: httpx.Client) -> None:
    post_batch(client, "k-1", ndjson(ROWS))
    (mutation,) = ledger(client)["mutations"]
    assert "records" not in mutation


def test_repeated_delivery_key_is_applied_again_and_counted_as_duplicate(client: httpx.Client) -> None:
    first = post_batch(client, "k-1", ndjson(ROWS))
    second = post_batch(client, "k-1", ndjson(ROWS))

    assert (first.status_code, second.status_code) == (200, 200)
    assert first.json()["batch_id"] != second.json()["batch_id"]
    state = ledger(client)
    assert [m["duplicate"] for m in state["mutations"]] == [False, True]
    assert state["duplicate_mutations"] == 1
    assert state["rows_by_key"] == {"k-1": 6}


def test_same_key_under_another_resource_is_not_a_duplicate(client: httpx.Client) -> None:
    post_batch(client, "k-1", ndjson(ROWS))
    post_batch(client, "k-1", ndjson(ROWS), path="/mock/v1/batches/other")
    assert ledger(client)["duplicate_mutations"] == 0


def test_malformed_ndjson_is_refused_with_a_bounded_message_and_no_effect(client: httpx.Client) -> None:
    secret_row = b'{"note": "do-not-echo-' + b"x" * 5000 + b'"}\n'
    response = post_batch(client, "k-1", secret_row + b"{not json}\n")

    assert response.status_code == 400
    assert response.json()["error"] == "malformed_payload"
    assert response.json()["message"].startswith("NDJSON line 2:")
    assert len(response.content) < 400
    assert b"do-not-echo" not in response.content
    assert ledger(client)["mutations"] == []


def test_invalid_utf8_nan_duplicate_keys_and_non_objects_are_refused(client: httpx.Client) -> None:
    for body in (b'{"a": "\xff"}\n', b'{"a": NaN}\n', b'{"a": 1, "a": 2}\n', b"[1, 2]\n", b'{"a":1}\n\n'):
        response = post_batch(client, "k-1", body)
        assert response.status_code == 400, body
    assert ledger(client)["mutations"] == []


def test_last_line_terminator_is_optional(client: httpx.Client) -> None:
    response = post_batch(client, "k-1", b'{"a": 1}\n{"a": 2}')
    assert response.json()["accepted_rows"] == 2


def test_missing_or_repeated_delivery_key_and_wrong_media_type_are_refused(client: httpx.Client) -> None:
    body = ndjson(ROWS)
    missing = client.post(SYNC_PATH, content=body, headers={"Content-Type": NDJSON})
    repeated = client.post(SYNC_PATH, content=body, headers=[("Content-Type", NDJSON),
                                                             ("X-Delivery-Key", "a"),
                                                             ("X-Delivery-Key", "b")])
    wrong_type = client.post(SYNC_PATH, content=body, headers={"X-Delivery-Key": "k",
                                                               "Content-Type": "application/json"})
    bad_resource = post_batch(client, "k", body, path="/mock/v1/batches/-bad")

    assert missing.status_code == 400
    assert repeated.status_code == 400
    assert wrong_type.status_code == 415
    assert bad_resource.status_code == 400
    assert ledger(client)["mutations"] == []


def test_oversized_body_is_refused() -> None:
    with ReceiverThread(ReceiverConfig(token=TOKEN, max_body_bytes=1024)) as small, httpx.Client(
            base_url=small.base_url, headers={"Authorization": f"Bearer {TOKEN}"},
            trust_env=False) as http:
        response = post_batch(http, "k", ndjson([{"a": "x" * 100}] * 20))
        assert response.status_code == 413
        assert small.state.ledger.mutations == ()
