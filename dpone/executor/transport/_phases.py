"""One table from httpx exception types to transport phases (the effect-safety boundary).

httpx raises :class:`httpx.ConnectError` / :class:`httpx.ConnectTimeout` only while opening the
connection (name resolution, TCP connect, TLS handshake, proxy tunnel): no request byte has been
written. :class:`httpx.PoolTimeout` means no connection was ever assigned. Everything after the
first header byte is written — write and read errors and timeouts, a connection closed before
or during the response, a local protocol error while streaming the body — may have reached the
receiver. Anything unlisted is classified conservatively as ``MAY_HAVE_REACHED``.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterable
from typing import Final

import httpx

from dpone.contracts.transport import Failure, FailureKind, TransportPhase

_NOT = TransportPhase.NOT_STARTED
_MAY = TransportPhase.MAY_HAVE_REACHED

# Most specific first: the first matching row wins.
PHASE_TABLE: Final[tuple[tuple[type[httpx.TransportError], FailureKind, TransportPhase], ...]] = (
    (httpx.ConnectTimeout, FailureKind.CONNECT_TIMEOUT, _NOT),
    (httpx.ConnectError, FailureKind.CONNECT, _NOT),
    (httpx.PoolTimeout, FailureKind.POOL_TIMEOUT, _NOT),
    (httpx.ProxyError, FailureKind.PROXY, _NOT),
    (httpx.UnsupportedProtocol, FailureKind.UNSUPPORTED_PROTOCOL, _NOT),
    (httpx.WriteTimeout, FailureKind.WRITE_TIMEOUT, _MAY),
    (httpx.WriteError, FailureKind.WRITE, _MAY),
    (httpx.ReadTimeout, FailureKind.READ_TIMEOUT, _MAY),
    (httpx.ReadError, FailureKind.READ, _MAY),
    (httpx.RemoteProtocolError, FailureKind.PROTOCOL, _MAY),
    (httpx.LocalProtocolError, FailureKind.PROTOCOL, _MAY),
    (httpx.TransportError, FailureKind.TRANSPORT, _MAY),
)


def classify(exc: httpx.TransportError, *, secrets: Iterable[str] = (),
             status: int | None = None) -> Failure:
    """The :class:`Failure` for ``exc`` (kept as ``cause``); ``secrets`` are masked in ``detail``."""
    kind, phase = FailureKind.TRANSPORT, _MAY
    for exc_type, row_kind, row_phase in PHASE_TABLE:
        if isinstance(exc, exc_type):
            kind, phase = row_kind, row_phase
            break
    if kind is FailureKind.CONNECT:
        kind = _refine_connect(exc)
    return Failure(phase=phase, kind=kind, status=status, cause=exc,
                   detail=redact(f"{type(exc).__name__}: {exc}", secrets))


def _refine_connect(exc: BaseException) -> FailureKind:
    """Tell DNS and TLS failures apart by the OS/ssl error at the root of the chain."""
    for link in _chain(exc):
        if isinstance(link, socket.gaierror):
            return FailureKind.DNS
        if isinstance(link, ssl.SSLError | ssl.CertificateError):
            return FailureKind.TLS
    return FailureKind.CONNECT


def _chain(exc: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen and len(seen) < 16:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of a secret value replaced by ``***``."""
    for value in sorted(secrets, key=len, reverse=True):
        if value:
            text = text.replace(value, "***")
    return text
