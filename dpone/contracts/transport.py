"""What goes into a transport and what comes out: one rendered request and its tagged outcome.

Pure values (no HTTP library): the supervisor builds :class:`OutboundRequest` and reads a
:class:`Response` or a :class:`Failure`; :class:`TransportPhase` says whether any request byte
may have reached the receiver. The port that sends is
:class:`~dpone.contracts.ports.RestTransportPort`; its httpx adapter lives in
``dpone.executor.transport``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal


class TransportPhase(enum.StrEnum):
    """How far a failed exchange got, which decides whether a resend can ever be safe."""

    NOT_STARTED = "not_started"
    """Provably no request byte left this process (DNS, connect, TLS, pool, credential fetch)."""
    MAY_HAVE_REACHED = "may_have_reached"
    """Some request bytes may have reached the receiver: its effect is unknown."""
    RESPONSE_TOO_LARGE = "response_too_large"
    """The receiver answered (the request reached it) with a body beyond the byte bound."""


class FailureKind(enum.StrEnum):
    """The finer classification recorded as evidence (spec: distinct timeout classes)."""

    DNS = "dns"
    CONNECT = "connect"
    CONNECT_TIMEOUT = "connect_timeout"
    TLS = "tls"
    POOL_TIMEOUT = "pool_timeout"
    PROXY = "proxy"
    UNSUPPORTED_PROTOCOL = "unsupported_protocol"
    CREDENTIAL = "credential"
    WRITE = "write"
    WRITE_TIMEOUT = "write_timeout"
    READ = "read"
    READ_TIMEOUT = "read_timeout"
    PROTOCOL = "protocol"
    TOTAL_DEADLINE = "total_deadline"
    BODY_SOURCE = "body_source"
    TRANSPORT = "transport"
    RESPONSE_TOO_LARGE = "response_too_large"


@dataclass(frozen=True, slots=True)
class OutboundRequest:
    """One fully rendered request. ``path`` is relative to the binding authority.

    ``body`` yields exactly ``content_length`` bytes. A re-iterable body (a list, or
    :class:`ReplayableBody`) lets the transport resend once after an OAuth 401; a one-shot
    iterator is never resent.
    """

    method: str
    path: str
    content_type: str | None = None
    body: Iterable[bytes] = ()
    content_length: int = 0
    query: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ReplayableBody:
    """A body that can be opened again, e.g. ``ReplayableBody(lambda: store.open_stream(key))``."""

    open: Callable[[], Iterable[bytes]]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.open())


@dataclass(frozen=True, slots=True)
class Response:
    """The receiver answered: status, allowlisted headers (lower-case names), bounded body.

    ``origin`` is the ``scheme://host:port`` the transport sent to (the binding's authority):
    an absolute receipt location is accepted only when it names exactly this origin."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    origin: str | None = None
    tag: Literal["response"] = field(default="response", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))


@dataclass(frozen=True, slots=True)
class Failure:
    """No usable response. ``cause`` is the original exception (excluded from eq/repr)."""

    phase: TransportPhase
    kind: FailureKind
    detail: str
    status: int | None = None
    cause: BaseException | None = field(default=None, compare=False, repr=False)
    bound_s: float | None = None
    """The configured bound that fired, for a timeout kind (``read timeout after 30 s``)."""
    tag: Literal["failure"] = field(default="failure", init=False)


TransportOutcome = Response | Failure


_TIMEOUT_NAMES: Final = {FailureKind.CONNECT_TIMEOUT: "connect timeout",
                         FailureKind.READ_TIMEOUT: "read timeout",
                         FailureKind.WRITE_TIMEOUT: "write timeout",
                         FailureKind.POOL_TIMEOUT: "connection pool timeout",
                         FailureKind.TOTAL_DEADLINE: "total request deadline"}


def failure_facts(failure: Failure) -> dict[str, str | int]:
    """What the journal records of a failed exchange with its attempt: the transport phase,
    the failure kind and, for a timeout, its bound in seconds and a sentence for people
    (``read timeout after 30 s``). Never a header, a body or an exception text."""
    facts: dict[str, str | int] = {"transport_phase": failure.phase.value,
                                   "transport_failure": failure.kind.value}
    name = _TIMEOUT_NAMES.get(failure.kind)
    if name is not None and failure.bound_s is not None:
        bound = round(failure.bound_s)
        facts["transport_bound_s"] = bound
        facts["transport_cause"] = f"{name} after {bound} s"
    return facts
