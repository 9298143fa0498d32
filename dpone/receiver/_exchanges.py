"""What the receiver received: the request line, headers and body digest of each delivery
request, as the wire carried them (``GET /mock/_requests``).

A test compares them with what `dpone preview` says a plan sends. The credential is never kept:
an ``Authorization`` value is replaced by :data:`REDACTED` before it is stored. Bounded: the
newest :data:`LIMIT` requests are kept.
"""

from __future__ import annotations

import collections
import hashlib
import threading
from typing import Any, Final

REDACTED: Final = "<redacted>"
LIMIT: Final = 1000
_CREDENTIAL_HEADERS: Final = frozenset({b"authorization", b"proxy-authorization"})


class ExchangeLog:
    def __init__(self, limit: int = LIMIT) -> None:
        self._entries: collections.deque[dict[str, Any]] = collections.deque(maxlen=limit)
        self._lock = threading.Lock()

    def record(self, method: str, target: bytes, headers: list[tuple[bytes, bytes]],
               body: bytes) -> None:
        """One delivery request: ``target`` is the raw path and query of its request line."""
        entry = {
            "method": method,
            "path": target.decode("latin-1"),
            "headers": [[name.decode("latin-1"),
                         REDACTED if name.lower() in _CREDENTIAL_HEADERS
                         else value.decode("latin-1")] for name, value in headers],
            "body_bytes": len(body),
            "body_digest": "sha256:" + hashlib.sha256(body).hexdigest(),
        }
        with self._lock:
            self._entries.append(entry)

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
