"""Raw ASGI layers: authentication, request counting, fault firing and connection abort.

ASGI has no message for "close the connection without answering". uvicorn closes the
transport without writing a byte when the application callable returns a value other than
``None`` (it logs "ASGI callable should return None"); raising instead makes it answer 500.
:class:`ConnectionAborter` is therefore the outermost callable handed to uvicorn: the gate
marks the request's :class:`DropSignal`, everything the application sends afterwards is
swallowed, and the aborter returns :data:`ABORTED`.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from email.utils import formatdate
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dpone.receiver._faults import Endpoint, FaultRule, classify
from dpone.receiver._state import ReceiverState

FAULT_SCOPE_KEY = "dpone.receiver.fault"
DROP_SCOPE_KEY = "dpone.receiver.drop"


class DropSignal:
    def __init__(self) -> None:
        self.dropped = False


class _Aborted:
    def __repr__(self) -> str:
        return "commit_then_drop fault: connection closed before any response byte"


ABORTED = _Aborted()


class ConnectionAborter:
    """Outermost ASGI callable: returns :data:`ABORTED` for a dropped request (see module doc)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> object:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return None
        signal = DropSignal()
        scope[DROP_SCOPE_KEY] = signal

        async def guarded(message: Message) -> None:
            if not signal.dropped:
                await send(message)

        await self.app(scope, receive, guarded)
        return ABORTED if signal.dropped else None


async def send_json(send: Send, status: int, body: dict[str, Any],
                    headers: list[tuple[bytes, bytes]] | None = None) -> None:
    payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode("ascii")),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": payload, "more_body": False})


async def _swallow(message: Message) -> None:
    del message


class FaultGate:
    """Counts, authenticates, then fires at most one fault rule per request."""

    def __init__(self, app: ASGIApp, state: ReceiverState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.state.handled(+1)
        try:
            await self._handle(scope, receive, send)
        finally:
            self.state.handled(-1)

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, path = scope["method"], scope["path"]
        endpoint = classify(method, path)
        self.state.jobs.settle(self.state.now())
        if endpoint is not Endpoint.CONTROL:
            keys = [v for k, v in scope["headers"] if k == b"idempotency-key"]
            self.state.ledger.count_request(
                method, path, b", ".join(keys).decode("latin-1") if keys else None)
        if not self._authorized(scope):
            await send_json(send, 401, {"error": "unauthorized",
                                        "message": "a valid bearer token is required"},
                            [(b"www-authenticate", b"Bearer"), (b"connection", b"close")])
            return
        rule = None if endpoint is Endpoint.CONTROL else self.state.faults.take(method, path, endpoint)
        if rule is None:
            await self.app(scope, receive, send)
            return
        await self._fire(rule, scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        token = self.state.config.token
        if token is None:
            return True
        values = [v for k, v in scope["headers"] if k == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, credential = values[0].decode("latin-1").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            credential.strip().encode("utf-8"), token.encode("utf-8"))

    async def _fire(self, rule: FaultRule, scope: Scope, receive: Receive, send: Send) -> None:
        kind = rule.fault
        if kind == "refuse_before_read":
            await self._answer_status(rule, send, default=503, close=True)
        elif kind == "status":
            if rule.params.get("after_commit", False):
                await self.app(scope, receive, _swallow)
                await self._answer_status(rule, send, default=500, close=False)
            else:
                complete = await self._drain(receive)
                await self._answer_status(rule, send, default=500, close=not complete)
        elif kind == "slow":
            await self.app(scope, receive, _delayed(send, rule.int_param("delay_ms", 0) / 1000))
        elif kind == "commit_then_drop":
            await self.app(scope, receive, _swallow)
            signal = scope.get(DROP_SCOPE_KEY)
            if not isinstance(signal, DropSignal):
                raise RuntimeError("commit_then_drop needs the receiver's ASGI entry point "
                                   "(dpone.receiver.asgi_app), which can close a connection")
            signal.dropped = True
        else:  # partial, expire_receipt, cancel_job, fail_job: the endpoint applies them
            scope[FAULT_SCOPE_KEY] = rule
            await self.app(scope, receive, send)

    async def _drain(self, receive: Receive) -> bool:
        """Read and discard the request body; False when it is larger than a body may be."""
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return False
            seen += len(message.get("body", b""))
            if seen > self.state.config.max_body_bytes:
                return False
            if not message.get("more_body", False):
                return True

    async def _answer_status(self, rule: FaultRule, send: Send, *, default: int, close: bool) -> None:
        status = rule.int_param("status", default)
        headers: list[tuple[bytes, bytes]] = []
        if "retry_after" in rule.params:
            headers.append((b"retry-after", str(rule.params["retry_after"]).encode("latin-1")))
        elif "retry_after_date_in" in rule.params:
            when = self.state.now() + rule.int_param("retry_after_date_in", 0)
            headers.append((b"retry-after", formatdate(when, usegmt=True).encode("ascii")))
        if close:
            headers.append((b"connection", b"close"))
        await send_json(send, status, {"error": "injected_fault",
                                       "message": f"HTTP {status} injected by a fault rule"}, headers)


def _delayed(send: Send, seconds: float) -> Send:
    async def delayed(message: Message) -> None:
        if message["type"] == "http.response.start":
            await asyncio.sleep(seconds)
        await send(message)

    return delayed
