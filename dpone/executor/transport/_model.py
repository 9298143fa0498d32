"""The transport's own settings: timeouts and the response headers it keeps.

The exchange types (request, response, failure, phases) are contracts: the adapter's modules
import them from ``dpone.contracts.transport``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from dpone.contracts.profile import Timeouts

__all__ = ["DEFAULT_RESPONSE_HEADERS", "TransportTimeouts"]


@dataclass(frozen=True, slots=True)
class TransportTimeouts:
    """Seconds. ``connect`` bounds TCP connect and, separately, the TLS handshake; ``total``
    bounds one ``RestTransportPort.send`` (token fetch, request, a 401 resend, response).
    ``dns`` bounds the one name resolution of a request under a network policy (the transport
    resolves the receiver itself there; without a policy the HTTP client resolves, unbounded
    but counted against ``total`` between socket operations)."""

    connect: float = 5.0
    read: float = 60.0
    write: float = 60.0
    pool: float = 10.0
    total: float = 300.0
    dns: float = 5.0

    def __post_init__(self) -> None:
        for name in ("connect", "read", "write", "pool", "total", "dns"):
            if not getattr(self, name) > 0:
                raise ValueError(f"timeout {name} must be positive")

    @classmethod
    def from_profile(cls, timeouts: Timeouts, *, tls: bool = True) -> TransportTimeouts:
        connect = max(timeouts.connect_s, timeouts.tls_s) if tls else timeouts.connect_s
        return cls(connect=float(max(connect, 1)), read=float(max(timeouts.read_s, 1)),
                   write=float(max(timeouts.write_s, 1)), pool=float(max(timeouts.pool_s, 1)),
                   total=float(max(timeouts.request_total_s, 1)),
                   dns=float(max(timeouts.dns_s, 1)))


DEFAULT_RESPONSE_HEADERS: Final = frozenset({
    "content-type", "content-length", "content-encoding", "retry-after", "location",
    "operation-location", "etag", "date",
})
