"""Auth providers as ``httpx.Auth``: bearer, API key in an allowlisted header, Basic, OAuth 2.0
client credentials (in-memory token cache, refreshed once on 401). mTLS is configured on the
client's TLS context, not here. Every provider's ``repr`` hides its secret."""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Final

import httpx

from dpone.contracts import DponeError
from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.secret import Credential, Secret

RESERVED_HEADERS: Final = frozenset({
    "host", "content-length", "content-type", "content-encoding", "transfer-encoding",
    "connection", "keep-alive", "te", "trailer", "upgrade", "expect", "cookie", "accept-encoding",
    "proxy-authorization", "proxy-connection", "user-agent",
})
"""Names an API key may never travel in: they belong to the transport."""


class BearerAuth(httpx.Auth):
    def __init__(self, token: Secret) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token.reveal()}"
        yield request

    def __repr__(self) -> str:
        return "BearerAuth(***)"


class ApiKeyHeaderAuth(httpx.Auth):
    def __init__(self, header_name: str, token: Secret) -> None:
        self.header_name = checked_api_key_header(header_name)
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers[self.header_name] = self._token.reveal()
        yield request

    def __repr__(self) -> str:
        return f"ApiKeyHeaderAuth({self.header_name!r}, ***)"


class HttpBasicAuth(httpx.Auth):
    def __init__(self, username: Secret, password: Secret) -> None:
        self._username = username
        self._password = password

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        pair = f"{self._username.reveal()}:{self._password.reveal()}".encode()
        request.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        yield request

    def __repr__(self) -> str:
        return "HttpBasicAuth(***)"


@dataclass(frozen=True, slots=True)
class TokenGrant:
    """An access token and its lifetime in seconds (``None`` when the server gave none)."""

    access_token: Secret
    expires_in: float | None


class OAuth2ClientCredentialsAuth(httpx.Auth):
    """Bearer auth with a token from ``fetch(timeout)``; cached in memory until shortly before
    its expiry (``expires_in`` minus at most 30 s; 300 s when the server gives no lifetime).

    ``invalidate()`` drops the cached token: the transport calls it on a 401 and resends once.
    Thread-safe: concurrent senders share one fetch.
    """

    DEFAULT_LIFETIME_S: Final = 300.0
    MAX_SKEW_S: Final = 30.0

    def __init__(self, fetch: Callable[[float | None], TokenGrant],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch
        self._clock = clock
        self._lock = threading.Lock()
        self._token: Secret | None = None
        self._expires_at = 0.0
        self.fetch_count = 0

    def token(self, timeout: float | None = None) -> Secret:
        """The cached token, fetched (within ``timeout`` seconds) when missing or expiring."""
        with self._lock:
            now = self._clock()
            if self._token is None or now >= self._expires_at:
                grant = self._fetch(timeout)
                self.fetch_count += 1
                lifetime = (self.DEFAULT_LIFETIME_S if grant.expires_in is None
                            else grant.expires_in)
                self._token = grant.access_token
                self._expires_at = now + lifetime - min(self.MAX_SKEW_S, lifetime / 2)
            return self._token

    def invalidate(self) -> None:
        with self._lock:
            self._token = None

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token().reveal()}"
        yield request

    def __repr__(self) -> str:
        return "OAuth2ClientCredentialsAuth(***)"


def checked_api_key_header(name: str | None) -> str:
    """``name`` when it may carry an API key; ``schema.invalid_value`` otherwise."""
    if not name or not name.isascii() or not all(ch.isalnum() or ch == "-" for ch in name) \
            or not name[0].isalpha() or len(name) > 64:
        raise DponeError(code="schema.invalid_value",
                         message="api_key_header needs auth_options.header_name "
                         "(letters, digits and '-')")
    if name.lower() in RESERVED_HEADERS or name.lower().startswith(("proxy-", "sec-")):
        raise DponeError(code="schema.invalid_value",
                         message=f"header {name!r} belongs to the transport and cannot carry "
                         "an API key")
    return name


def build_auth(binding: ConnectionBinding, credential: Credential,
               fetch_token: Callable[[float | None], TokenGrant] | None = None,
               clock: Callable[[], float] = time.monotonic) -> httpx.Auth | None:
    """The ``httpx.Auth`` of the binding's provider (``None`` for ``mtls`` and ``none``)."""
    provider = binding.auth_provider
    if credential.provider != provider:
        raise DponeError(code="credential.unavailable",
                         message=f"credential resolved for {credential.provider}, "
                         f"binding uses {provider}")
    if provider == "bearer":
        return BearerAuth(credential.secret("token"))
    if provider == "api_key_header":
        return ApiKeyHeaderAuth(checked_api_key_header(binding.auth_options.header_name),
                                credential.secret("token"))
    if provider == "basic":
        return HttpBasicAuth(credential.secret("username"), credential.secret("password"))
    if provider == "oauth2_client_credentials":
        if fetch_token is None:
            raise DponeError(code="credential.unavailable",
                             message="oauth2_client_credentials needs a token endpoint")
        return OAuth2ClientCredentialsAuth(fetch_token, clock)
    return None
