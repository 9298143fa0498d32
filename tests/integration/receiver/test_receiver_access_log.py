"""`dpone receiver serve` logs one line per request on its console (stderr): method, path, the
delivery or duplicate key, the rows the request carried, DUPLICATE for a key applied before, the
status and the time taken. Never the bearer token or a body value. A receiver embedded in a test
stays quiet unless the test asks for the lines."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from dpone.receiver import ReceiverThread
from support.common import free_port
from support.receiver import csv_gz, multipart, ndjson, post_batch

TOKEN = "tok-access-log-sentinel-4Kq9"


def _wait_for(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the receiver did not start")


def test_every_request_is_one_console_line_without_secrets() -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", "from dpone.cli.main import main; main()", "receiver", "serve",
         "--port", str(port), "--processing-seconds", "0"],
        env={**os.environ, "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN": TOKEN, "NO_COLOR": "1"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}",
                          headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            body = ndjson([{"business_date": "2026-08-01", "note": "row-value-sentinel"}] * 3)
            for _ in range(2):
                assert client.post("/mock/v1/batches/readings?debug=query-sentinel",
                                   content=body, headers={
                                       "x-delivery-key": "sha256:" + "ab" * 32,
                                       "content-type": "application/x-ndjson"}).status_code == 200
            content, content_type = multipart("cd" * 32 + ".csv.gz", csv_gz())
            assert client.post("/mock/v1/dataset-jobs", content=content,
                               headers={"content-type": content_type}).status_code == 202
            assert client.get("/mock/v1/dataset-jobs/job-unknown").status_code == 404
    finally:
        server.terminate()
        _, err = server.communicate(timeout=20)

    lines = [line for line in err.splitlines() if "/mock/v1/" in line]
    assert len(lines) == 4, err
    assert lines[0].endswith(" -> 200 (" + lines[0].rsplit("(", 1)[1])
    assert f"POST /mock/v1/batches/readings key=sha256:{'ab' * 32} rows=3 -> 200" in lines[0]
    assert f"POST /mock/v1/batches/readings key=sha256:{'ab' * 32} rows=3 DUPLICATE -> 200" \
        in lines[1]
    assert f"POST /mock/v1/dataset-jobs key={'cd' * 32}.csv.gz rows=" in lines[2]
    assert "-> 202" in lines[2]
    assert "GET /mock/v1/dataset-jobs/job-unknown -> 404" in lines[3]
    assert TOKEN not in err and "row-value-sentinel" not in err and "query-sentinel" not in err


def test_an_embedded_receiver_is_quiet_unless_asked(caplog: pytest.LogCaptureFixture,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    with ReceiverThread() as running, httpx.Client(base_url=running.base_url) as client:
        assert post_batch(client, "quiet-1", ndjson([{"n": 1}])).status_code == 200
        caplog.set_level(logging.INFO, logger="dpone.receiver")
        assert post_batch(client, "asked-1", ndjson([{"n": 1}, {"n": 2}])).status_code == 200

    lines = [r.getMessage() for r in caplog.records if r.name == "dpone.receiver"]
    assert len(lines) == 1 and "POST /mock/v1/batches/readings key=asked-1 rows=2 -> 200" \
        in lines[0], lines
    assert "/mock/v1/" not in capfd.readouterr().err
