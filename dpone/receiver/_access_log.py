"""One log line per request the mock receiver answers: what an operator reads in its console.

``POST /mock/v1/batches/measurement_readings key=sha256:5f4a... rows=630 -> 200 (12 ms)``: the
method, the path (never the query), the duplicate or delivery key and the rows the request
carried when the endpoint read them, ``DUPLICATE`` when the ledger counted a key applied
before (a duplicate mutation), the status (``dropped`` for a connection closed without an
answer) and the time taken. Never a header value other than the key, never a credential or a
body. The lines go to the ``dpone.receiver`` logger: `dpone receiver serve` prints them on
stderr; a receiver embedded in tests stays quiet unless a handler is configured.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOGGER = logging.getLogger("dpone.receiver")


def note(request: Request, *, key: str | None = None, rows: int | None = None,
         duplicate: bool = False) -> None:
    """What the endpoint learned of ``request`` for its log line: its key, its rows and whether
    the ledger counted it as a duplicate mutation (a key applied before)."""
    if key is not None:
        request.state.log_key = key
    if rows is not None:
        request.state.log_rows = rows
    if duplicate:
        request.state.log_duplicate = True


class AccessLog:
    """ASGI middleware: one ``dpone.receiver`` INFO line per HTTP request, after its answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not LOGGER.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        status: list[int] = []

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            LOGGER.info("%s", _line(scope, status[0] if status else None,
                                    time.monotonic() - started))


def _line(scope: Scope, status: int | None, elapsed_s: float) -> str:
    state: dict[str, Any] = scope.get("state") or {}
    words = [str(scope.get("method", "")), str(scope.get("path", ""))]
    if state.get("log_key") is not None:
        words.append(f"key={state['log_key']}")
    if state.get("log_rows") is not None:
        words.append(f"rows={state['log_rows']}")
    if state.get("log_duplicate"):
        words.append("DUPLICATE")
    shown = str(status) if status is not None else "dropped"
    return f"{' '.join(words)} -> {shown} ({elapsed_s * 1000:.0f} ms)"
