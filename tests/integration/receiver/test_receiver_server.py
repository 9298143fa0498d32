"""Serving on a socket: a free loopback port, a clean stop, one start per thread (what needs no
socket is in tests/unit/receiver/test_receiver_setup.py)."""

from __future__ import annotations

import socket

import httpx
import pytest

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.receiver import TOKEN, ndjson, post_batch


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
