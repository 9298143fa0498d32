"""A loopback proxy in front of the mock receiver that rewrites chosen response bodies.

Every request is forwarded to the receiver unchanged, so its effect is real (a submit is applied
and counted in the receiver's ledger); a rule then replaces the body of the first matching
answer (``rewrite(upstream_body) -> bytes``) and may trickle it out one small chunk at a time
(``drip_s`` between chunks), so no single read waits long while the whole answer takes long.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

_HOP: frozenset[str] = frozenset({"connection", "keep-alive", "transfer-encoding",
                                  "content-length", "host"})


@dataclass
class Rule:
    method: str
    path_prefix: str
    rewrite: Callable[[bytes], bytes]
    drip_s: float | None = None
    chunk: int = 4
    fired: int = 0


class TamperingProxy:
    """``with TamperingProxy(receiver.base_url) as proxy: proxy.url``."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.rules: list[Rule] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def tamper(self, method: str, path_prefix: str, rewrite: Callable[[bytes], bytes], *,
               drip_s: float | None = None, chunk: int = 4) -> Rule:
        """Rewrite the body of the next answer to ``method path_prefix...`` (once)."""
        rule = Rule(method, path_prefix, rewrite, drip_s, chunk)
        with self._lock:
            self.rules.append(rule)
        return rule

    def _take(self, method: str, path: str) -> Rule | None:
        with self._lock:
            for rule in self.rules:
                if rule.fired == 0 and rule.method == method and path.startswith(rule.path_prefix):
                    rule.fired = 1
                    return rule
        return None

    def __enter__(self) -> TamperingProxy:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                upstream = http.client.HTTPConnection(*proxy.upstream, timeout=30)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    content = answer.read()
                    kept = [(k, v) for k, v in answer.getheaders() if k.lower() not in _HOP]
                    status = answer.status
                finally:
                    upstream.close()
                rule = proxy._take(self.command, self.path)
                if rule is not None:
                    content = rule.rewrite(content)
                self.send_response(status)
                for name, value in kept:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(content)))
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    if rule is None or rule.drip_s is None:
                        self.wfile.write(content)
                        return
                    for start in range(0, len(content), rule.chunk):
                        self.wfile.write(content[start:start + rule.chunk])
                        self.wfile.flush()
                        time.sleep(rule.drip_s)
                except OSError:
                    return  # the client gave up: that is what a bound does
                finally:
                    self.close_connection = True

            do_GET = do_POST = do_PUT = _forward

        return Handler
