"""The mock receiver's HTTP surface (Starlette).

Delivery endpoints (the two example profiles):

* ``POST /mock/v1/batches/{resource}`` — NDJSON body, ``X-Delivery-Key`` header; applies every
  row and answers ``200 {"batch_id", "accepted_rows", "rejected_rows"}``. Deliberately not
  idempotent: a repeated key is applied again and counted as a duplicate mutation.
* ``POST /mock/v1/dataset-jobs`` — multipart: one gzip CSV part ``file`` whose filename is the
  duplicate key, scalar parts ``range_start`` / ``range_end``; ``202 {"job_id"}``, or ``409
  {"job_id", "filename"}`` naming the original job for a filename already submitted (unless a
  certification variant of :class:`ReceiverConfig` forgets keys or rebinds them to other bytes).
* ``GET /mock/v1/dataset-jobs/{job_id}`` — ``{"job_id", "filename", "phase", "rows_accepted",
  "rows_rejected"}`` (``filename`` echoes the job's duplicate key); 404 for an unknown job
  (a job of an earlier receiver start included: job ids are ``job-<boot id>-<number>``),
  404/410 for an expired receipt (410 once the job is ``receipt_ttl_seconds`` old, when set).
* ``GET /mock/v1/dataset-job-keys/{key}`` — read-only lookup by key (``sha256:<hex>``, the hex
  of a submitted filename): the job submitted under it, as the status answer (``filename``
  echoes it), even when its receipt has expired; 404 when this receiver holds none (a job of an
  earlier receiver start included: a restart forgets the jobs and the ledger together). Never
  a mutation: it is counted as a request line like every read, and only the ``status``,
  ``slow``, ``refuse_before_read`` and ``commit_then_drop`` faults apply to it.

Control endpoints (same authentication, never counted, never faulted): ``GET /mock/_ledger``
(``?rows=1`` adds parsed rows), ``GET|POST /mock/_faults``, ``GET /mock/_requests`` (the
newest delivery requests as received: request line, headers with the credential redacted, body
size and digest; what a test compares with `dpone preview`) and ``POST /mock/_reset``.
"""

from __future__ import annotations

import hashlib
import json
import re

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from dpone.receiver._access_log import AccessLog, note
from dpone.receiver._config import ReceiverConfig
from dpone.receiver._faults import FaultRule, FaultRuleError
from dpone.receiver._gate import FAULT_SCOPE_KEY, ConnectionAborter, FaultGate
from dpone.receiver._multipart import Part, parse_multipart
from dpone.receiver._readers import PayloadError, gunzip, read_csv, read_ndjson
from dpone.receiver._state import ReceiverState

_RESOURCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_KEY = re.compile(r"[\x21-\x7e]{1,256}")
_FILENAME = re.compile(r"[A-Za-z0-9._-]{1,255}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_NDJSON_TYPES = {"application/x-ndjson", "application/ndjson"}
_GZIP_TYPES = {"application/gzip", "application/x-gzip"}
_JOB_PARTS = {"file", "range_start", "range_end"}
_CONTROL_BODY_BYTES = 1024 * 1024


class _Refused(Exception):
    """A request the receiver answers with an error and no effect."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message[:200]


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": code, "message": message[:200]}, status_code=status)


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _Refused(413, "payload_too_large", f"the body exceeds {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _Refused(413, "payload_too_large", f"the body exceeds {limit} bytes")
    return bytes(body)


def _fault(request: Request) -> FaultRule | None:
    rule = request.scope.get(FAULT_SCOPE_KEY)
    return rule if isinstance(rule, FaultRule) else None


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class _Endpoints:
    def __init__(self, state: ReceiverState) -> None:
        self.state = state
        self.limit = state.config.max_body_bytes

    async def _received(self, request: Request) -> bytes:
        """A delivery request's body, its request line and headers recorded (``_requests``)."""
        body = await _body(request, self.limit)
        query = request.scope.get("query_string", b"")
        target = request.scope.get("raw_path") or request.scope["path"].encode("latin-1")
        self.state.exchanges.record(request.method, target + (b"?" + query if query else b""),
                                    list(request.headers.raw), body)
        return body

    async def batch(self, request: Request) -> JSONResponse:
        try:
            return await self._batch(request)
        except (_Refused, PayloadError) as exc:
            return _refusal(exc)

    async def _batch(self, request: Request) -> JSONResponse:
        resource = request.path_params["resource"]
        if not _RESOURCE.fullmatch(resource):
            raise _Refused(400, "invalid_resource", "the resource name is not valid")
        keys = request.headers.getlist("x-delivery-key")
        if len(keys) != 1 or not _KEY.fullmatch(keys[0]):
            raise _Refused(400, "invalid_delivery_key", "exactly one printable X-Delivery-Key is required")
        if _media_type(request) not in _NDJSON_TYPES:
            raise _Refused(415, "unsupported_media_type", "the body must be application/x-ndjson")
        note(request, key=keys[0])
        rows = await run_in_threadpool(read_ndjson, await self._received(request))
        note(request, rows=len(rows))
        rule = _fault(request)
        accepted = len(rows)
        if rule is not None and rule.fault == "partial":
            accepted = min(rule.int_param("accepted_rows", 0), len(rows))
        mutation = self.state.ledger.apply(kind="sync", resource=resource, key=keys[0],
                                           rows=rows[:accepted], applied_at=self.state.now())
        note(request, duplicate=mutation.duplicate)
        return JSONResponse({"batch_id": self.state.next_batch_id(), "accepted_rows": accepted,
                             "rejected_rows": len(rows) - accepted})

    async def submit_job(self, request: Request) -> JSONResponse:
        try:
            return await self._submit_job(request)
        except (_Refused, PayloadError) as exc:
            return _refusal(exc)

    async def _submit_job(self, request: Request) -> JSONResponse:
        if _media_type(request) != "multipart/form-data":
            raise _Refused(415, "unsupported_media_type", "the body must be multipart/form-data")
        parts = parse_multipart(await self._received(request), request.headers["content-type"])
        file, scope = _job_parts(parts)
        filename = file.filename or ""
        note(request, key=filename)
        jobs = self.state.jobs
        digest = hashlib.sha256(file.data).hexdigest()
        if (existing := jobs.duplicate_of(filename, digest, self.state.now())) is not None:
            return JSONResponse({"job_id": existing.job_id, "filename": filename}, status_code=409)
        rows = await run_in_threadpool(_read_job_file, file.data, self.state.config.max_decoded_bytes)
        note(request, rows=len(rows))
        now = self.state.now()
        if (existing := jobs.duplicate_of(filename, digest, now)) is not None:  # a concurrent submit won
            return JSONResponse({"job_id": existing.job_id, "filename": filename}, status_code=409)
        job = jobs.create(filename=filename, rows=rows, now=now, scope=scope,
                          payload_digest=digest)
        rule = _fault(request)
        if rule is not None:
            if rule.fault == "partial":
                job.ending, job.apply_rows = "incomplete", rule.int_param("accepted_rows", 0)
            elif rule.fault in ("cancel_job", "fail_job"):
                job.ending = "cancelled" if rule.fault == "cancel_job" else "error"
                job.apply_rows = rule.int_param("apply_rows", 0)
            elif rule.fault == "expire_receipt":
                job.expired_status = rule.int_param("status", 410)
        jobs.settle(self.state.now())  # processing_seconds == 0 ends the job at once
        return JSONResponse({"job_id": job.job_id}, status_code=202,
                            headers={"location": f"/mock/v1/dataset-jobs/{job.job_id}"})

    async def job(self, request: Request) -> JSONResponse:
        jobs, now = self.state.jobs, self.state.now()
        job = jobs.get(request.path_params["job_id"])
        if job is None:
            return _error(404, "not_found", "no such job")
        rule = _fault(request)
        if rule is not None:
            if rule.fault == "expire_receipt":
                job.expired_status = rule.int_param("status", 410)
            elif rule.fault in ("cancel_job", "fail_job"):
                jobs.end_now(job, "cancelled" if rule.fault == "cancel_job" else "error",
                             rule.int_param("apply_rows", 0), now)
        ttl = self.state.config.receipt_ttl_seconds
        if job.expired_status is None and ttl is not None and now - job.created_at >= ttl:
            job.expired_status = 410  # the receipt outlived the receiver's receipt TTL
        if job.expired_status is not None:
            return _error(job.expired_status, "receipt_expired", "the job receipt has expired")
        return JSONResponse(job.to_json(now, jobs.processing_seconds))

    async def job_by_key(self, request: Request) -> JSONResponse:
        jobs = self.state.jobs
        job = jobs.by_key(request.path_params["key"])
        if job is None:
            return _error(404, "not_found", "no job under this key")
        return JSONResponse(job.to_json(self.state.now(), jobs.processing_seconds))

    async def ledger(self, request: Request) -> JSONResponse:
        with_rows = request.query_params.get("rows") == "1"
        return JSONResponse(self.state.ledger.snapshot(with_rows=with_rows))

    async def faults(self, request: Request) -> JSONResponse:
        if request.method == "GET":
            return JSONResponse({"pending": self.state.faults.pending()})
        try:
            raw = json.loads(await _body(request, _CONTROL_BODY_BYTES))
            pending = self.state.faults.install(raw)
        except _Refused as exc:
            return _refusal(exc)
        except (ValueError, FaultRuleError) as exc:
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            return _error(400, "invalid_fault_rules", message)
        return JSONResponse({"pending": pending})

    async def requests(self, request: Request) -> JSONResponse:
        del request
        return JSONResponse({"requests": self.state.exchanges.snapshot()})

    async def reset(self, request: Request) -> JSONResponse:
        del request
        self.state.reset()
        return JSONResponse({"reset": True})


def _read_job_file(data: bytes, limit: int) -> list[dict[str, str | None]]:
    return read_csv(gunzip(data, limit))


def _refusal(exc: _Refused | PayloadError) -> JSONResponse:
    if isinstance(exc, _Refused):
        response = _error(exc.status, exc.code, exc.message)
        if exc.status == 413:
            response.headers["connection"] = "close"
        return response
    return _error(400, "malformed_payload", str(exc))


def _job_parts(parts: list[Part]) -> tuple[Part, dict[str, str]]:
    names = [part.name for part in parts]
    if len(set(names)) != len(names) or set(names) != _JOB_PARTS:
        raise _Refused(400, "invalid_parts", "exactly the parts file, range_start and range_end are required")
    by_name = {part.name: part for part in parts}
    file = by_name["file"]
    if file.filename is None or not _FILENAME.fullmatch(file.filename):
        raise _Refused(400, "invalid_filename", "the file part needs a filename of A-Z a-z 0-9 . _ -")
    if file.content_type not in _GZIP_TYPES:
        raise _Refused(415, "unsupported_media_type", "the file part must be application/gzip")
    scope: dict[str, str] = {}
    for name in ("range_start", "range_end"):
        part = by_name[name]
        value = part.data.decode("utf-8", errors="replace")
        if part.filename is not None or not _DATE.fullmatch(value):
            raise _Refused(400, "invalid_range", f"{name} must be a YYYY-MM-DD text part")
        scope[name] = value
    if scope["range_start"] > scope["range_end"]:
        raise _Refused(400, "invalid_range", "range_start is after range_end")
    return file, scope


def create_app(config: ReceiverConfig) -> Starlette:
    """The receiver application; its state is ``app.state.receiver`` (a ReceiverState).

    Serve it through :func:`asgi_app` (which the server helpers do): only that entry point
    can close a connection without a response, which ``commit_then_drop`` needs.
    """
    state = ReceiverState(config)
    endpoints = _Endpoints(state)
    routes = [
        Route("/mock/v1/batches/{resource}", endpoints.batch, methods=["POST"]),
        Route("/mock/v1/dataset-jobs", endpoints.submit_job, methods=["POST"]),
        Route("/mock/v1/dataset-jobs/{job_id}", endpoints.job, methods=["GET"]),
        Route("/mock/v1/dataset-job-keys/{key}", endpoints.job_by_key, methods=["GET"]),
        Route("/mock/_ledger", endpoints.ledger, methods=["GET"]),
        Route("/mock/_faults", endpoints.faults, methods=["GET", "POST"]),
        Route("/mock/_requests", endpoints.requests, methods=["GET"]),
        Route("/mock/_reset", endpoints.reset, methods=["POST"]),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(AccessLog),
                                               Middleware(FaultGate, state=state)])
    app.state.receiver = state
    return app


def asgi_app(app: Starlette) -> ConnectionAborter:
    """The ASGI callable to hand to uvicorn for an app made by :func:`create_app`."""
    inner: ASGIApp = app
    return ConnectionAborter(inner)


def receiver_state(app: Starlette) -> ReceiverState:
    state = app.state.receiver
    if not isinstance(state, ReceiverState):
        raise TypeError("not an app made by dpone.receiver.create_app")
    return state

