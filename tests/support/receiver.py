"""Helpers for the mock receiver suites: hand-built payloads (independent of dpone.codecs)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from typing import Any

import httpx

PROCESSING_SECONDS = 10.0
"""How long a job of the session receiver runs on its manual clock."""
TOKEN = "tok-7Qx2-never-echoed"
NDJSON = "application/x-ndjson"
BOUNDARY = "test-boundary-5f2c"
SYNC_PATH = "/mock/v1/batches/readings"
JOBS_PATH = "/mock/v1/dataset-jobs"

CSV_TEXT = (
    'day,sensor,value,note\n'
    '2026-09-01,s-1,1.5,"Привет, мир"\n'
    '2026-09-01,s-2,,""\n'
    '2026-09-02,s-3,-2,"line one\nline ""two"""\n'
)
CSV_ROWS = [
    {"day": "2026-09-01", "sensor": "s-1", "value": "1.5", "note": "Привет, мир"},
    {"day": "2026-09-01", "sensor": "s-2", "value": None, "note": ""},
    {"day": "2026-09-02", "sensor": "s-3", "value": "-2", "note": 'line one\nline "two"'},
]


def ndjson(rows: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n" for row in rows)


def csv_gz(text: str = CSV_TEXT) -> bytes:
    return gzip.compress(text.encode("utf-8"), mtime=0)


def multipart(filename: str | None, data: bytes, *, range_start: str = "2026-09-01",
              range_end: str = "2026-09-03", file_type: str = "application/gzip",
              extra: Iterable[tuple[str, str]] = ()) -> tuple[bytes, str]:
    """The body and Content-Type of one dataset-job submit."""
    out = bytearray()
    for name, value in [("range_start", range_start), ("range_end", range_end), *extra]:
        out += (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n"
                f"{value}\r\n").encode()
    disposition = 'form-data; name="file"' + (f'; filename="{filename}"' if filename else "")
    out += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\nContent-Type: {file_type}\r\n\r\n".encode()
    out += data + f"\r\n--{BOUNDARY}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={BOUNDARY}"


def post_batch(client: httpx.Client, key: str, body: bytes, *, path: str = SYNC_PATH,
               **kwargs: Any) -> httpx.Response:
    return client.post(path, content=body, headers={"X-Delivery-Key": key, "Content-Type": NDJSON},
                       **kwargs)


def submit_job(client: httpx.Client, filename: str, data: bytes | None = None,
               **kwargs: Any) -> httpx.Response:
    body, content_type = multipart(filename, csv_gz() if data is None else data)
    return client.post(JOBS_PATH, content=body, headers={"Content-Type": content_type}, **kwargs)


def install(client: httpx.Client, *rules: dict[str, Any]) -> None:
    response = client.post("/mock/_faults", json=list(rules))
    assert response.status_code == 200, response.text


def rule(fault: str, path_prefix: str, method: str = "POST", **params: Any) -> dict[str, Any]:
    return {"match": {"method": method, "path_prefix": path_prefix}, "fault": fault, **params}


def ledger(client: httpx.Client, *, rows: bool = False) -> dict[str, Any]:
    response = client.get("/mock/_ledger", params={"rows": "1"} if rows else None)
    assert response.status_code == 200
    result: dict[str, Any] = response.json()
    return result


def job(client: httpx.Client, job_id: str) -> httpx.Response:
    return client.get(f"{JOBS_PATH}/{job_id}")
