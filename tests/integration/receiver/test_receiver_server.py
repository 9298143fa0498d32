"""Serving: loopback only, a clean stop, and the token taken from the environment."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import pytest
from _receiver_support import TOKEN, ndjson, post_batch

import dpone.receiver
from dpone.receiver import (
    ReceiverConfig,
    ReceiverSetupError,
    ReceiverThread,
    create_app,
    receiver_state,
    run,
    serve,
)


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::", "example.com", ""])
def test_non_loopback_hosts_are_refused(host: str) -> None:
    with pytest.raises(ReceiverSetupError, match="loopback only"):
        ReceiverThread(host=host)
    with pytest.raises(ReceiverSetupError, match="loopback only"):
        run(host=host, port=1)


def test_serve_needs_the_token_variable_to_be_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DPONE_TEST_RECEIVER_TOKEN", raising=False)
    with pytest.raises(ReceiverSetupError, match="DPONE_TEST_RECEIVER_TOKEN"):
        serve(port=1, host="127.0.0.1", token_env="DPONE_TEST_RECEIVER_TOKEN", processing_seconds=1.0)


def test_thread_starts_on_a_free_port_and_stops_cleanly() -> None:
    receiver = ReceiverThread(ReceiverConfig(token=TOKEN))
    with receiver:
        assert receiver.base_url == f"http://127.0.0.1:{receiver.port}"
        with httpx.Client(base_url=receiver.base_url, trust_env=False,
                          headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            assert post_batch(http, "k", ndjson([{"a": 1}])).status_code == 200
        port = receiver.port
    with socket.socket() as probe, pytest.raises(OSError):
        probe.settimeout(1)
        probe.connect(("127.0.0.1", port))


def test_a_receiver_cannot_be_started_twice() -> None:
    with ReceiverThread() as receiver, pytest.raises(RuntimeError, match="already started"):
        receiver.start()


def test_public_api_is_pinned() -> None:
    assert sorted(dpone.receiver.__all__) == sorted([
        "FAULT_KINDS", "Clock", "FaultRule", "FaultRuleError", "Ledger", "ManualClock", "Mutation",
        "PayloadError", "ReceiverConfig", "ReceiverSetupError", "ReceiverState", "ReceiverThread",
        "asgi_app", "create_app", "receiver_state", "run", "serve",
    ])
    assert set(dpone.receiver.FAULT_KINDS) == {
        "commit_then_drop", "status", "partial", "expire_receipt", "cancel_job", "fail_job", "slow",
        "refuse_before_read",
    }


def test_commit_then_drop_is_loud_without_the_aborting_entry_point() -> None:
    app = create_app(ReceiverConfig())
    receiver_state(app).faults.install([{"match": {"path_prefix": "/mock/v1/"}, "fault": "commit_then_drop"}])
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/mock/v1/batches/r", "raw_path": b"/mock/v1/batches/r",
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2),
             "headers": [(b"x-delivery-key", b"k"), (b"content-type", b"application/x-ndjson")]}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": ndjson([{"a": 1}]), "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with pytest.raises(RuntimeError, match="asgi_app"):
        asyncio.run(app(scope, receive, send))
    assert [m.rows for m in receiver_state(app).ledger.mutations] == [1]  # it did commit
    assert sent[0]["status"] == 500  # what a server without the aborter makes of it
