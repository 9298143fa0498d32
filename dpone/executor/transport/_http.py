"""``HttpTransport``: one isolated httpx client per connection binding.

The client never follows redirects (a 3xx is a response to classify; its Location is never
contacted), ignores proxy/TLS environment variables (a proxy comes only from the binding's
network policy, or the explicit ``proxy`` argument without one), verifies TLS under the
binding's TLS policy (certifi or the policy's CA bundle; TLS 1.2+ or the policy's minimum),
presents the mTLS client certificate when the binding says so, and asks for ``identity``
encoding so the byte bound applies to what is actually read. Under a network policy the
receiver's name is resolved once per request and checked (:mod:`._network`) before any byte,
and the sockets go only to the checked addresses. Every socket operation is bounded by the timeout
vector; the total deadline clips each operation's timeout to the time left when the request
starts and is checked between body chunks in both directions.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

import httpx

from dpone.contracts import DponeError
from dpone.contracts.binding import ConnectionBinding, NetworkPolicy, TlsPolicy
from dpone.contracts.secret import Credential
from dpone.contracts.transport import (
    Failure,
    FailureKind,
    OutboundRequest,
    Response,
    TransportOutcome,
    TransportPhase,
)
from dpone.executor.cuts import CutHook
from dpone.executor.transport._auth import (
    OAuth2ClientCredentialsAuth,
    TokenGrant,
    build_auth,
)
from dpone.executor.transport._location import origin_of
from dpone.executor.transport._model import DEFAULT_RESPONSE_HEADERS, TransportTimeouts
from dpone.executor.transport._network import (
    GuardedTransport,
    NameUnresolved,
    NetworkGuard,
    Resolver,
    system_resolver,
)
from dpone.executor.transport._oauth import CredentialFetchFailed, fetch_client_credentials
from dpone.executor.transport._phases import classify, redact
from dpone.executor.transport._tls import ssl_context
from dpone.executor.transport._wire import (
    BODYLESS,
    CLIENT_HEADERS,
    NoCookies,
    authority_url,
    request_url,
    wire_headers,
)

MAX_HEADER_VALUE_BYTES: Final = 8_192
_DEFAULT_PORT: Final = {"http": 80, "https": 443}


class _DeadlineExceeded(Exception):
    """The total request deadline passed between two body chunks."""


class _BodySourceFailed(Exception):
    """The caller's body iterator failed or gave a different length than declared."""


class HttpTransport:
    """Implements :class:`RestTransportPort` for one binding. Thread-safe; close when done.

    ``tls_policy`` and ``network_policy`` are the platform policies the binding names (the
    plan carries them; see :func:`transport_for`): without a TLS policy TLS 1.2+ is verified
    against certifi or ``ca_bundle``; without a network policy nothing checks or pins the
    receiver's addresses and ``proxy`` (default none) is the proxy. ``resolver`` replaces the
    system resolver under a network policy (tests). ``transport`` replaces the network
    (``httpx.MockTransport`` in unit tests); ``clock`` is a monotonic clock in seconds.
    ``cut`` (tests only, see :mod:`dpone.executor.cuts`) is told
    ``before:send``, ``after:send`` once the last body byte was handed to the socket, and
    ``after:response`` once a response was read; None (the default) costs nothing.
    """

    def __init__(self, binding: ConnectionBinding, credential: Credential, *,
                 timeouts: TransportTimeouts | None = None,
                 max_response_bytes: int = 65_536,
                 response_headers: Iterable[str] = (),
                 proxy: str | None = None,
                 ca_bundle: str | Path | None = None,
                 tls_policy: TlsPolicy | None = None,
                 network_policy: NetworkPolicy | None = None,
                 resolver: Resolver = system_resolver,
                 max_connections: int = 8,
                 clock: Callable[[], float] = time.monotonic,
                 transport: httpx.BaseTransport | None = None,
                 cut: CutHook | None = None) -> None:
        self._cut = cut
        self._binding = binding
        self._base = authority_url(binding.authority)
        self._origin = origin_of(self._base.scheme, self._base.host, self._base.port)
        if tls_policy is not None and tls_policy.require_https and self._base.scheme != "https":
            raise DponeError(code="binding.insecure_authority",
                             message=f"TLS policy {binding.tls_policy_ref!r} requires https")
        context = ssl_context(tls_policy or TlsPolicy(), credential, ca_bundle)
        self._guard: NetworkGuard | None = None
        if network_policy is not None:
            if proxy is not None:
                raise ValueError("a network policy names the proxy; pass no proxy argument")
            self._guard = NetworkGuard(network_policy, binding.network_policy_ref, resolver,
                                       dns_timeout_s=(timeouts or TransportTimeouts()).dns)
            if transport is None:  # the guarded pool holds the policy's proxy, httpx none
                transport = GuardedTransport(self._guard, context, proxy=network_policy.proxy,
                                             max_connections=max_connections)
        self._resolve_authority = self._guard is not None and (
            network_policy is None or network_policy.proxy is None)
        self._timeouts = timeouts or TransportTimeouts()
        self._max_response_bytes = max_response_bytes
        self._allowed_headers = DEFAULT_RESPONSE_HEADERS | {h.lower() for h in response_headers}
        self._clock = clock
        self._secret_values = tuple(secret.reveal() for secret in credential.secrets())
        self._client = httpx.Client(
            base_url=self._base, timeout=self._timeout(self._timeouts.total),
            follow_redirects=False, trust_env=False, proxy=proxy,
            verify=context,
            limits=httpx.Limits(max_connections=max_connections,
                                max_keepalive_connections=max_connections),
            headers=CLIENT_HEADERS, cookies=NoCookies(),
            transport=transport)
        fetch = self._token_fetcher(binding, credential)
        self._auth = build_auth(binding, credential, fetch, clock)

    def __enter__(self) -> HttpTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"HttpTransport({str(self._base)!r})"

    def send(self, request: OutboundRequest) -> TransportOutcome:
        """Send ``request``; network outcomes come back as :class:`Response` or :class:`Failure`.

        A malformed request (absolute or traversing path, transport-owned header, control
        character) raises ``DponeError`` before anything is sent.
        """
        url = self._url(request.path)
        headers = self._headers(request)
        deadline = self._clock() + self._timeouts.total
        if self._guard is not None and self._resolve_authority:
            try:  # once per request; the sockets of this request go to these addresses only
                self._guard.resolve(self._base.host, self._base.port or _DEFAULT_PORT[
                    self._base.scheme])
            except NameUnresolved as exc:
                return Failure(phase=TransportPhase.NOT_STARTED, kind=FailureKind.DNS,
                               detail=str(exc), cause=exc)
        replayable = not isinstance(request.body, Iterator)
        refreshable = isinstance(self._auth, OAuth2ClientCredentialsAuth) and replayable
        outcome = self._exchange(request, url, headers, deadline)
        if refreshable and isinstance(outcome, Response) and outcome.status == 401 \
                and isinstance(self._auth, OAuth2ClientCredentialsAuth):
            self._auth.invalidate()
            outcome = self._exchange(request, url, headers, deadline)
        if isinstance(outcome, Failure):
            outcome = self._bounded(outcome)
        if self._cut is not None and isinstance(outcome, Response):
            self._cut("after", "response")
        return outcome

    def _exchange(self, request: OutboundRequest, url: httpx.URL, headers: dict[str, str],
                  deadline: float) -> TransportOutcome:
        remaining = deadline - self._clock()
        if remaining <= 0:
            return Failure(phase=TransportPhase.NOT_STARTED, kind=FailureKind.TOTAL_DEADLINE,
                           detail="total request deadline passed before sending")
        status: int | None = None
        try:
            if isinstance(self._auth, OAuth2ClientCredentialsAuth):
                self._auth.token(remaining)
            has_body = request.content_length > 0 or request.method not in BODYLESS
            content = _guarded(request.body, request.content_length, deadline, self._clock) \
                if has_body else None
            if self._cut is not None:
                self._cut("before", "send")
                if content is not None:
                    content = _cut_after_last(content, self._cut)
            http_request = self._client.build_request(
                request.method, url, params=list(request.query), headers=headers,
                content=content, timeout=self._timeout(deadline - self._clock()))
            response = self._client.send(http_request, stream=True, auth=self._auth)
            try:
                status = response.status_code
                return self._read(response, deadline)
            finally:
                response.close()
        except CredentialFetchFailed as exc:
            return Failure(phase=TransportPhase.NOT_STARTED, kind=FailureKind.CREDENTIAL,
                           detail=redact(exc.detail, self._secret_values), cause=exc)
        except _DeadlineExceeded as exc:
            return Failure(phase=TransportPhase.MAY_HAVE_REACHED, kind=FailureKind.TOTAL_DEADLINE,
                           detail="total request deadline passed during the exchange",
                           status=status, cause=exc)
        except _BodySourceFailed as exc:
            return Failure(phase=TransportPhase.MAY_HAVE_REACHED, kind=FailureKind.BODY_SOURCE,
                           detail=redact(str(exc), self._secret_values), cause=exc)
        except httpx.TransportError as exc:
            failure = classify(exc, secrets=self._secret_values, status=status)
            if isinstance(exc, httpx.TimeoutException) and self._clock() >= deadline - 1e-3:
                failure = dataclasses.replace(failure, kind=FailureKind.TOTAL_DEADLINE)
            return failure

    def _read(self, response: httpx.Response, deadline: float) -> TransportOutcome:
        status = response.status_code
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max_response_bytes:
            return _too_large(status, self._max_response_bytes)
        body = bytearray()
        for chunk in raw_chunks(response):
            body += chunk
            if len(body) > self._max_response_bytes:
                return _too_large(status, self._max_response_bytes)
            if self._clock() >= deadline:
                raise _DeadlineExceeded
        kept: dict[str, str] = {}
        for name in self._allowed_headers:
            values = response.headers.get_list(name)
            value = ", ".join(values)
            if values and len(value.encode()) <= MAX_HEADER_VALUE_BYTES:
                kept[name] = value
        return Response(status=status, headers=kept, body=bytes(body), origin=self._origin)

    def _bounded(self, failure: Failure) -> Failure:
        """``failure`` with the configured bound of its timeout kind (none for other kinds)."""
        t = self._timeouts
        bound = {FailureKind.CONNECT_TIMEOUT: t.connect, FailureKind.READ_TIMEOUT: t.read,
                 FailureKind.WRITE_TIMEOUT: t.write, FailureKind.POOL_TIMEOUT: t.pool,
                 FailureKind.TOTAL_DEADLINE: t.total}.get(failure.kind)
        return failure if bound is None else dataclasses.replace(failure, bound_s=bound)

    def _timeout(self, remaining: float) -> httpx.Timeout:
        t = self._timeouts
        left = max(remaining, 1e-3)
        return httpx.Timeout(connect=min(t.connect, left), read=min(t.read, left),
                             write=min(t.write, left), pool=min(t.pool, left))

    def _token_fetcher(self, binding: ConnectionBinding,
                       credential: Credential) -> Callable[[float | None], TokenGrant] | None:
        if binding.auth_provider != "oauth2_client_credentials":
            return None
        token_path = binding.auth_options.token_path
        if token_path is None:
            raise DponeError(code="schema.invalid_value",
                             message="oauth2_client_credentials needs auth_options.token_path")
        token_url = self._url(token_path)
        scopes = binding.auth_options.scopes

        def fetch(timeout: float | None) -> TokenGrant:
            return fetch_client_credentials(
                self._client, token_path=str(token_url), credential=credential, scopes=scopes,
                timeout=self._timeout(self._timeouts.total if timeout is None else timeout))

        return fetch

    def _url(self, path: str) -> httpx.URL:
        return request_url(self._base, path)

    def _headers(self, request: OutboundRequest) -> dict[str, str]:
        return wire_headers(request, self._binding)


def _guarded(body: Iterable[bytes], length: int, deadline: float,
             clock: Callable[[], float]) -> Iterator[bytes]:
    """Yield ``body``'s chunks, checking the deadline and the declared length."""
    try:
        chunks = iter(body)
    except Exception as exc:
        raise _BodySourceFailed(f"request body could not be opened: {type(exc).__name__}") from exc
    sent = 0
    while True:
        if clock() >= deadline:
            raise _DeadlineExceeded
        try:
            chunk = next(chunks)
        except StopIteration:
            break
        except Exception as exc:
            raise _BodySourceFailed(f"request body failed: {type(exc).__name__}") from exc
        sent += len(chunk)
        if sent > length:
            raise _BodySourceFailed(f"request body is longer than its content_length {length}")
        yield chunk
    if sent != length:
        raise _BodySourceFailed(f"request body gave {sent} bytes, content_length is {length}")


def _cut_after_last(chunks: Iterator[bytes], cut: CutHook) -> Iterator[bytes]:
    """``chunks``, then ``after:send`` when the client asks past the last one: by then every
    byte of the body was handed to the socket and no byte of the response was read."""
    yield from chunks
    cut("after", "send")


def raw_chunks(response: httpx.Response) -> Iterable[bytes]:
    """The body as received (never decompressed), or the bytes an in-memory transport loaded."""
    if response.is_stream_consumed:
        return (response.content,)
    return response.iter_raw()


def _too_large(status: int, bound: int) -> Failure:
    return Failure(phase=TransportPhase.RESPONSE_TOO_LARGE, kind=FailureKind.RESPONSE_TOO_LARGE,
                   detail=f"response body exceeds {bound} bytes", status=status)


if TYPE_CHECKING:
    from dpone.contracts.ports import CredentialResolver, RestTransportPort
    from dpone.executor.transport._credentials import EnvironmentCredentialResolver

    def _conforms(transport: HttpTransport, resolver: EnvironmentCredentialResolver,
                  ) -> tuple[RestTransportPort, CredentialResolver]:
        """Port conformance, proved by mypy."""
        return transport, resolver
