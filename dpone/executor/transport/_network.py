"""Egress under the binding's network policy: one checked DNS answer per request, pinned sockets.

:class:`NetworkGuard` resolves the receiver's name once per request, refuses the request before
any byte when an answer lies outside the policy (``network.address_forbidden``) or outside the
answers first pinned for that name in this transport (``network.dns_rebinding``: a name that
moves between requests), and hands the HTTP client only the checked addresses:
:class:`GuardedBackend` is an httpcore network backend that connects to those addresses, never to
a fresh resolution, while TLS SNI, certificate verification and the Host header keep the name.
With a policy proxy the sockets go to the proxy only, whose address the policy must allow; the
proxy resolves the receiver's name.

:class:`GuardedTransport` is the httpx transport over an httpcore pool built with that backend,
the TLS context of the binding's TLS policy and the policy's proxy (never an environment proxy);
httpcore's exceptions are translated to httpx's in one table, so the phase table
(:mod:`._phases`) classifies them as for any other httpx transport.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Final

import httpcore
import httpx

from dpone.contracts import DponeError
from dpone.contracts.binding import IpAddress, NetworkPolicy, address_allowed

Resolver = Callable[[str, int], Iterable[str]]
"""``(host, port) -> addresses``: the system resolver by default, a fake in tests."""


def system_resolver(host: str, port: int) -> tuple[str, ...]:
    """Every address ``getaddrinfo`` gives for a TCP connection to ``host:port``, in order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return tuple(dict.fromkeys(str(info[4][0]) for info in infos))


class NameUnresolved(Exception):
    """The resolver gave no address (or failed): the request never started."""


def _literal(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def bounded_resolution(resolver: Resolver, host: str, port: int,
                       timeout_s: float) -> tuple[str, ...]:
    """``resolver(host, port)`` within ``timeout_s`` (the profile's ``timeouts.dns_s``), else
    :class:`NameUnresolved`. The lookup runs on a daemon thread: ``getaddrinfo`` cannot be
    interrupted, so one that hangs is abandoned, never waited for (nor at exit)."""
    answers: list[tuple[str, ...]] = []
    failures: list[OSError] = []

    def lookup() -> None:
        try:
            answers.append(tuple(resolver(host, port)))
        except OSError as exc:
            failures.append(exc)

    thread = threading.Thread(target=lookup, daemon=True, name="dpone-dns")
    thread.start()
    thread.join(timeout_s)
    if failures:
        raise failures[0]
    if not answers:
        raise NameUnresolved(f"{host!r} did not resolve within {timeout_s:g} s "
                             "(timeouts.dns_s)")
    return answers[0]


class NetworkGuard:
    """The network policy of one binding, with the DNS answers this transport pinned."""

    def __init__(self, policy: NetworkPolicy, policy_ref: str,
                 resolver: Resolver = system_resolver, *, dns_timeout_s: float = 5.0) -> None:
        self.policy = policy
        self._ref = policy_ref
        self._resolver = resolver
        self._dns_timeout_s = dns_timeout_s
        self._pinned: dict[str, frozenset[IpAddress]] = {}
        self._current: dict[str, tuple[IpAddress, ...]] = {}
        self._lock = threading.Lock()

    def resolve(self, host: str, port: int) -> tuple[IpAddress, ...]:
        """Resolve ``host`` once, check every answer, pin the first answer set.

        Raises :class:`NameUnresolved` (nothing was resolved) or a ``DponeError``
        (``network.address_forbidden``, ``network.dns_rebinding``); nothing is sent either way.
        """
        key = host.lower()
        literal = _literal(key)
        if literal is not None:
            addresses: tuple[IpAddress, ...] = (literal,)
        else:
            try:
                answers = bounded_resolution(self._resolver, key, port, self._dns_timeout_s)
            except OSError as exc:
                raise NameUnresolved(f"{key!r} did not resolve: {exc}") from exc
            addresses = tuple(dict.fromkeys(ipaddress.ip_address(a) for a in answers))
            if not addresses:
                raise NameUnresolved(f"{key!r} resolved to no address")
        for address in addresses:
            if not address_allowed(address, self.policy):
                raise DponeError(
                    code="network.address_forbidden",
                    message=f"{key!r} resolves to {address}, outside network policy "
                            f"{self._ref!r} (allow {list(self.policy.allow)}, deny "
                            f"{list(self.policy.deny)}); nothing was sent",
                    details={"host": key, "address": str(address),
                             "network_policy_ref": self._ref})
        with self._lock:
            pinned = self._pinned.setdefault(key, frozenset(addresses))
            moved = sorted(str(a) for a in addresses if a not in pinned)
            if moved:
                raise DponeError(
                    code="network.dns_rebinding",
                    message=f"{key!r} now resolves to {', '.join(moved)}, outside the answers "
                            f"pinned when this run first resolved it "
                            f"({', '.join(sorted(str(a) for a in pinned))}); nothing was sent",
                    details={"host": key, "addresses": moved,
                             "pinned": sorted(str(a) for a in pinned)})
            self._current[key] = addresses
        return addresses

    def addresses(self, host: str, port: int) -> tuple[IpAddress, ...]:
        """The checked addresses to connect to: the current request's answer when the transport
        resolved ``host`` already (no second lookup), else one checked resolution now."""
        with self._lock:
            current = self._current.get(host.lower())
        return current if current is not None else self.resolve(host, port)


class GuardedBackend(httpcore.NetworkBackend):
    """Opens TCP connections only to addresses the guard checked (tried in answer order)."""

    def __init__(self, guard: NetworkGuard) -> None:
        self._guard = guard
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                    ) -> httpcore.NetworkStream:
        try:
            addresses = self._guard.addresses(host, port)
        except NameUnresolved as exc:
            raise httpcore.ConnectError(str(exc)) from exc.__cause__
        failure: Exception | None = None
        for address in addresses:
            try:
                return self._inner.connect_tcp(str(address), port, timeout=timeout,
                                               local_address=local_address,
                                               socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        if failure is None:  # unreachable: resolve() never returns an empty tuple
            raise httpcore.ConnectError(f"{host!r} has no address")
        raise failure

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                            ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are outside every network policy")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


# Most specific first: the first matching row wins.
_EXCEPTIONS: Final[tuple[tuple[type[Exception], type[httpx.TransportError]], ...]] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for source, target in _EXCEPTIONS:
            if isinstance(exc, source):
                raise target(str(exc)) from exc
        raise


class _Stream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _translated():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class GuardedTransport(httpx.BaseTransport):
    """An httpx transport whose sockets obey ``guard``; ``proxy`` is the policy's, or None."""

    def __init__(self, guard: NetworkGuard, context: ssl.SSLContext, *, max_connections: int,
                 proxy: str | None = None) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=context, max_connections=max_connections,
            max_keepalive_connections=max_connections,
            proxy=httpcore.Proxy(proxy, ssl_context=context) if proxy else None,
            network_backend=GuardedBackend(guard))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(request.stream, httpx.SyncByteStream):
            raise TypeError("GuardedTransport sends synchronous bodies only")
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                             port=request.url.port, target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        with _translated():
            response = self._pool.handle_request(core)
        if not isinstance(response.stream, Iterable):
            raise TypeError("httpcore returned an asynchronous stream")
        return httpx.Response(status_code=response.status, headers=response.headers,
                              stream=_Stream(response.stream), extensions=response.extensions)

    def close(self) -> None:
        self._pool.close()
