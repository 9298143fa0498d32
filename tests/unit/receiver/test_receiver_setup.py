"""The receiver without a socket: loopback only, the token from the environment, the public API,
and a commit-then-drop fault that is loud when served without the aborting entry point."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

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


def ndjson(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(row).encode("utf-8") + b"\n" for row in rows)


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
