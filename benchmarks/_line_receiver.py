"""A receiver that only counts rows, for the delivery benchmark: own process, no parsing.

Run: ``python benchmarks/_line_receiver.py [--port 0] [--token-env VAR]``; it prints
``listening <port>`` on stdout once it accepts connections and serves until SIGTERM/SIGINT.

It speaks the protocol of the two example profiles exactly as far as dpone's delivery and
verification read it, and nothing more:

* ``POST /mock/v1/batches/{resource}`` (NDJSON, one ``X-Delivery-Key``): the rows are the
  body's lines; ``200 {"batch_id", "accepted_rows", "rejected_rows": 0}``. Not idempotent, like
  the mock: a repeated key is applied again and counted in ``duplicate_mutations``.
* ``POST /mock/v1/dataset-jobs`` (multipart; a gzip CSV part ``file`` whose filename is the
  duplicate key): the rows are the gunzipped file's lines minus the header; the job is complete
  at once: ``202 {"job_id"}``, or ``409 {"job_id", "filename"}`` for a filename already taken.
* ``GET /mock/v1/dataset-jobs/{job_id}`` and ``GET /mock/v1/dataset-job-keys/{key}``: the job
  status ``{"job_id", "filename", "phase", "rows_accepted", "rows_rejected"}`` (404 unknown).
* control, never counted: ``GET /mock/_ledger`` (``rows_total``, ``mutations_total``,
  ``duplicate_mutations``, ``requests``, ``body_bytes``) and ``POST /mock/_reset``.

Every request needs ``Authorization: Bearer <token>`` when a token is configured (401 without
any effect otherwise). HTTP/1.1 keep-alive, ``Content-Length`` or chunked bodies, TCP_NODELAY
on every connection and each response written with one ``write`` (a receiver that sends
headers and body as two small packets without TCP_NODELAY adds a 40 ms delayed-ACK stall per
request). Counting lines is exact for these payloads: neither codec emits a newline inside a
value of the benchmark's data (no string holds one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import signal
import socket
import sys
import zlib
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpone

from dpone.receiver._multipart import parse_multipart
from dpone.receiver._readers import PayloadError

_BATCH = re.compile(r"/mock/v1/batches/([A-Za-z0-9][A-Za-z0-9._-]{0,127})")
_JOB = re.compile(r"/mock/v1/dataset-jobs/([A-Za-z0-9-]{1,64})")
_JOB_KEY = re.compile(r"/mock/v1/dataset-job-keys/(?:sha256:)?([0-9a-f]{64})")
_MAX_BODY = 256 * 1024 * 1024
Reply = tuple[int, dict[str, object]]


def count_lines(data: bytes) -> int:
    """Lines of an NDJSON or CSV text; a last line without its newline counts."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def gunzipped_lines(data: bytes) -> int:
    """Lines of a gzip member, inflated 1 MiB of input at a time (never held whole)."""
    inflater = zlib.decompressobj(wbits=31)
    lines, last, total, view = 0, b"\n", 0, memoryview(data)
    for start in range(0, len(data) + 1, 1 << 20):
        chunk = inflater.decompress(view[start:start + (1 << 20)]) if start < len(data) \
            else inflater.flush()
        lines, total = lines + chunk.count(b"\n"), total + len(chunk)
        last = chunk[-1:] or last
        if total > 4 * _MAX_BODY:
            raise PayloadError("the gzip member inflates beyond the receiver's bound")
    if not inflater.eof:
        raise PayloadError("truncated gzip member")
    return lines + (1 if last != b"\n" else 0)


@dataclass
class Job:
    job_id: str
    filename: str
    rows: int

    def status(self) -> dict[str, object]:
        return {"job_id": self.job_id, "filename": self.filename, "phase": "complete",
                "rows_accepted": self.rows, "rows_rejected": 0}


@dataclass
class Ledger:
    """What the benchmark checks after every run (reset between runs)."""

    boot: str = field(default_factory=lambda: secrets.token_hex(4))
    numbers: int = 0  # never reset: a stale receipt never names a new job
    rows_total: int = 0
    mutations_total: int = 0
    duplicate_mutations: int = 0
    body_bytes: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)
    jobs: dict[str, Job] = field(default_factory=dict)
    by_filename: dict[str, Job] = field(default_factory=dict)

    def next_id(self, prefix: str) -> str:
        self.numbers += 1
        return f"{prefix}-{self.boot}-{self.numbers:06d}"

    def apply(self, key: str, rows: int) -> None:
        self.mutations_total += 1
        self.rows_total += rows
        if key in self.keys:
            self.duplicate_mutations += 1
        self.keys.add(key)

    def reset(self) -> None:
        self.rows_total = self.mutations_total = self.duplicate_mutations = self.body_bytes = 0
        self.requests.clear()
        self.keys.clear()
        self.jobs.clear()
        self.by_filename.clear()

    def snapshot(self) -> dict[str, object]:
        return {"rows_total": self.rows_total, "mutations_total": self.mutations_total,
                "duplicate_mutations": self.duplicate_mutations, "body_bytes": self.body_bytes,
                "requests": dict(self.requests)}


class Receiver:
    def __init__(self, token: str | None) -> None:
        self.token = token
        self.ledger = Ledger()

    def answer(self, method: str, target: str, headers: dict[str, list[str]],
               body: bytes) -> Reply:
        if self.token is not None and headers.get("authorization") != [f"Bearer {self.token}"]:
            return 401, {"error": "unauthorized", "message": "a valid bearer token is required"}
        path = urlsplit(target).path
        if path == "/mock/_ledger" and method == "GET":
            return 200, self.ledger.snapshot()
        if path == "/mock/_reset" and method == "POST":
            self.ledger.reset()
            return 200, {"reset": True}
        line = f"{method} {path}"
        self.ledger.requests[line] = self.ledger.requests.get(line, 0) + 1
        self.ledger.body_bytes += len(body)
        try:
            return self._route(method, path, headers, body)
        except (PayloadError, zlib.error, UnicodeDecodeError, KeyError) as exc:
            return 400, {"error": "malformed_payload", "message": str(exc)[:200]}

    def _route(self, method: str, path: str, headers: dict[str, list[str]],
               body: bytes) -> Reply:
        if method == "POST" and _BATCH.fullmatch(path):
            keys = headers.get("x-delivery-key", [])
            if len(keys) != 1:
                return 400, {"error": "invalid_delivery_key", "message": "one X-Delivery-Key"}
            rows = count_lines(body)
            self.ledger.apply(keys[0], rows)
            return 200, {"batch_id": self.ledger.next_id("batch"), "accepted_rows": rows,
                         "rejected_rows": 0}
        if method == "POST" and path == "/mock/v1/dataset-jobs":
            return self._submit(headers["content-type"][0], body)
        if method == "GET" and (match := _JOB.fullmatch(path)):
            job = self.ledger.jobs.get(match.group(1))
            return (200, job.status()) if job else (404, {"error": "not_found"})
        if method == "GET" and (match := _JOB_KEY.fullmatch(path)):
            job = next((job for name, job in self.ledger.by_filename.items()
                        if name.split(".", 1)[0] == match.group(1)), None)
            return (200, job.status()) if job else (404, {"error": "not_found"})
        return 404, {"error": "not_found", "message": f"no route {method} {path}"}

    def _submit(self, content_type: str, body: bytes) -> Reply:
        parts = {part.name: part for part in parse_multipart(body, content_type)}
        file = parts["file"]
        filename = file.filename or ""
        if (existing := self.ledger.by_filename.get(filename)) is not None:
            return 409, {"job_id": existing.job_id, "filename": filename}
        rows = max(gunzipped_lines(file.data) - 1, 0)  # the CSV header line
        job = Job(self.ledger.next_id("job"), filename, rows)
        self.ledger.jobs[job.job_id] = job
        self.ledger.by_filename[filename] = job
        self.ledger.apply(filename, rows)
        return 202, {"job_id": job.job_id}


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, list[str]]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", [""])[0].lower():
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")  # no trailers are sent to this receiver
                return bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)
            if len(body) > _MAX_BODY:
                raise ValueError("body too large")
    length = int(headers.get("content-length", ["0"])[0])
    if length > _MAX_BODY:
        raise ValueError("body too large")
    return await reader.readexactly(length) if length else b""


def _response(status: int, document: dict[str, object], *, close: bool) -> bytes:
    data = json.dumps(document).encode()
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json"
            f"\r\ncontent-length: {len(data)}\r\n")
    if status == 202 and "job_id" in document:
        head += f"location: /mock/v1/dataset-jobs/{document['job_id']}\r\n"
    if close:
        head += "connection: close\r\n"
    return head.encode("latin-1") + b"\r\n" + data


async def _connection(receiver: Receiver, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            request_line, *lines = head[:-4].decode("latin-1").split("\r\n")
            method, target, _version = request_line.split(" ", 2)
            headers: dict[str, list[str]] = {}
            for line in lines:
                name, _, value = line.partition(":")
                headers.setdefault(name.strip().lower(), []).append(value.strip())
            body = await _read_body(reader, headers)
            status, document = receiver.answer(method, target, headers, body)
            close = headers.get("connection", [""])[0].lower() == "close"
            writer.write(_response(status, document, close=close))
            await writer.drain()
            if close:
                return
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        return
    finally:
        writer.close()


async def serve(port: int, token: str | None) -> None:
    receiver = Receiver(token)
    server = await asyncio.start_server(
        lambda r, w: _connection(receiver, r, w), "127.0.0.1", port, limit=1 << 20)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token-env", default="DPONE_CONN_MOCK_MEASUREMENTS_TOKEN",
                        help="environment variable holding the bearer token ('' for none)")
    args = parser.parse_args()
    token = os.environ.get(args.token_env) if args.token_env else None
    asyncio.run(serve(args.port, token or None))


if __name__ == "__main__":
    main()
