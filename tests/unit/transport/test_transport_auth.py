"""Auth providers over httpx.MockTransport: exact headers, OAuth caching and 401 refresh."""

from __future__ import annotations

import base64
import logging
import traceback
from collections.abc import Callable

import httpx
import pytest

from dpone.contracts import DponeError
from dpone.executor.transport import (
    Failure,
    FailureKind,
    HttpTransport,
    OutboundRequest,
    ReplayableBody,
    Response,
    TransportPhase,
    build_auth,
)
from support.transport import SENTINEL, binding, credential, post

Handler = Callable[[httpx.Request], httpx.Response]


def _transport(handler: Handler, provider: str = "bearer", **options: str) -> HttpTransport:
    fields: dict[str, str] = {}
    if provider == "basic":
        fields = {"username": "alice", "password": SENTINEL}
    elif provider == "oauth2_client_credentials":
        fields = {"client_id": "client-1", "client_secret": SENTINEL}
    return HttpTransport(binding(provider=provider, **options), credential(provider, **fields),
                         transport=httpx.MockTransport(handler))


def _capture() -> tuple[list[httpx.Request], Handler]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True})

    return seen, handler


def test_bearer_header_is_exact() -> None:
    seen, handler = _capture()
    with _transport(handler) as transport:
        assert isinstance(transport.send(post()), Response)
    assert seen[0].headers["Authorization"] == f"Bearer {SENTINEL}"


def test_api_key_travels_in_the_allowlisted_header_only() -> None:
    seen, handler = _capture()
    with _transport(handler, "api_key_header", header_name="X-Api-Key") as transport:
        transport.send(post())
    assert seen[0].headers["X-Api-Key"] == SENTINEL
    assert "authorization" not in seen[0].headers
    assert SENTINEL not in str(seen[0].url)


@pytest.mark.parametrize("name", [None, "Host", "Content-Length", "Cookie", "Proxy-Authorization",
                                  "Transfer-Encoding", "User-Agent"])
def test_api_key_header_name_must_be_allowed(name: str | None) -> None:
    options = {"header_name": name} if name else {}
    with pytest.raises(DponeError) as caught:
        build_auth(binding(provider="api_key_header", **options), credential("api_key_header"))
    assert caught.value.code == "schema.invalid_value"


def test_basic_header_is_exact() -> None:
    seen, handler = _capture()
    with _transport(handler, "basic") as transport:
        transport.send(post())
    expected = base64.b64encode(f"alice:{SENTINEL}".encode()).decode()
    assert seen[0].headers["Authorization"] == f"Basic {expected}"


class _OAuthServer:
    """Token endpoint at /oauth/token; the resource rejects tokens listed in ``revoked``."""

    def __init__(self, expires_in: int | None = 3600) -> None:
        self.token_requests: list[httpx.Request] = []
        self.resource_requests: list[httpx.Request] = []
        self.revoked: set[str] = set()
        self.expires_in = expires_in
        self.token_status = 200

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/token":
            self.token_requests.append(request)
            grant = {"access_token": f"tok-{len(self.token_requests)}-{SENTINEL}",
                     "token_type": "Bearer"}
            if self.expires_in is not None:
                grant["expires_in"] = self.expires_in  # type: ignore[assignment]
            return httpx.Response(self.token_status, json=grant)
        self.resource_requests.append(request)
        request.read()
        token = request.headers["Authorization"].removeprefix("Bearer ")
        return httpx.Response(401 if token in self.revoked else 200, json={"job_id": "j-1"})


def _oauth(server: _OAuthServer, clock: Callable[[], float] | None = None) -> HttpTransport:
    options = {"token_path": "/oauth/token", "scopes": ("ingest:write", "jobs:read")}
    kwargs = {"clock": clock} if clock else {}
    return HttpTransport(
        binding(provider="oauth2_client_credentials", **options),  # type: ignore[arg-type]
        credential("oauth2_client_credentials", client_id="client-1", client_secret=SENTINEL),
        transport=httpx.MockTransport(server), **kwargs)  # type: ignore[arg-type]


def test_oauth_token_is_fetched_once_and_reused() -> None:
    server = _OAuthServer()
    with _oauth(server) as transport:
        for _ in range(3):
            outcome = transport.send(post())
            assert isinstance(outcome, Response) and outcome.status == 200
    assert len(server.token_requests) == 1
    token_request = server.token_requests[0]
    assert token_request.method == "POST"
    assert token_request.url == "https://receiver.example.test/oauth/token"
    body = token_request.read().decode()
    assert "grant_type=client_credentials" in body
    assert "scope=ingest%3Awrite+jobs%3Aread" in body
    assert SENTINEL not in body
    pair = base64.b64encode(f"client-1:{SENTINEL}".encode()).decode()
    assert token_request.headers["Authorization"] == f"Basic {pair}"
    assert {r.headers["Authorization"] for r in server.resource_requests} == {
        f"Bearer tok-1-{SENTINEL}"}


def test_oauth_refreshes_once_on_401_and_resends_the_body() -> None:
    server = _OAuthServer()
    with _oauth(server) as transport:
        transport.send(post())
        server.revoked.add(f"tok-1-{SENTINEL}")
        outcome = transport.send(post(body=b'{"rows":2}'))
    assert isinstance(outcome, Response) and outcome.status == 200
    assert len(server.token_requests) == 2
    assert [r.content for r in server.resource_requests[1:]] == [b'{"rows":2}'] * 2


def test_oauth_second_401_is_returned_not_retried_again() -> None:
    server = _OAuthServer()
    server.revoked = {f"tok-{n}-{SENTINEL}" for n in range(1, 5)}
    with _oauth(server) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Response) and outcome.status == 401
    assert len(server.token_requests) == 2
    assert len(server.resource_requests) == 2


def test_one_shot_body_is_never_resent() -> None:
    server = _OAuthServer()
    server.revoked = {f"tok-1-{SENTINEL}"}
    request = OutboundRequest(method="POST", path="/v1/jobs", body=iter([b"abc"]),
                              content_length=3)
    with _oauth(server) as transport:
        outcome = transport.send(request)
    assert isinstance(outcome, Response) and outcome.status == 401
    assert len(server.resource_requests) == 1


def test_replayable_body_reopens_its_source() -> None:
    opened: list[int] = []

    def source() -> list[bytes]:
        opened.append(1)
        return [b"ab", b"c"]

    server = _OAuthServer()
    server.revoked = {f"tok-1-{SENTINEL}"}
    request = OutboundRequest(method="POST", path="/v1/jobs", body=ReplayableBody(source),
                              content_length=3)
    with _oauth(server) as transport:
        outcome = transport.send(request)
    assert isinstance(outcome, Response) and outcome.status == 200
    assert len(opened) == 2


def test_oauth_token_is_refetched_after_expiry() -> None:
    now = [1000.0]
    server = _OAuthServer(expires_in=120)
    with _oauth(server, clock=lambda: now[0]) as transport:
        transport.send(post())
        now[0] += 80  # within 120 s minus the 30 s skew
        transport.send(post())
        assert len(server.token_requests) == 1
        now[0] += 20
        transport.send(post())
    assert len(server.token_requests) == 2


def test_token_endpoint_failure_is_not_started() -> None:
    server = _OAuthServer()
    server.token_status = 400
    with _oauth(server) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Failure)
    assert outcome.phase is TransportPhase.NOT_STARTED
    assert outcome.kind is FailureKind.CREDENTIAL
    assert server.resource_requests == []


@pytest.mark.parametrize("grant", [b"not json", b"[]", b'{"token_type":"bearer"}',
                                   b'{"access_token":"a b\\n","token_type":"bearer"}',
                                   b'{"access_token":"t","token_type":"mac"}',
                                   b'{"access_token":"t","expires_in":-5}'])
def test_unusable_token_responses_are_not_started(grant: bytes) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/token":
            return httpx.Response(200, content=grant)
        raise AssertionError("the resource must not be contacted")

    with _oauth(handler) as transport:  # type: ignore[arg-type]
        outcome = transport.send(post())
    assert isinstance(outcome, Failure) and outcome.kind is FailureKind.CREDENTIAL
    assert outcome.phase is TransportPhase.NOT_STARTED


def test_sentinel_never_leaks(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server = _OAuthServer()

    def failing(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/boom":
            raise httpx.ReadError(f"connection broke while sending Bearer {SENTINEL}")
        return server(request)

    shown: list[str] = []
    with _oauth(failing) as transport:  # type: ignore[arg-type]
        shown += [repr(transport), str(transport._auth)]
        outcome = transport.send(post(path="/boom"))
        assert isinstance(outcome, Failure)
        shown += [repr(outcome), outcome.detail, str(outcome)]
        server.token_status = 500
        transport._auth.invalidate()  # type: ignore[union-attr]
        failed = transport.send(post())
        shown += [repr(failed), str(failed)]
        try:
            transport.send(OutboundRequest(method="POST", path="https://evil.test/x"))
        except DponeError as exc:
            shown += [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    for auth in (build_auth(binding(), credential()),
                 build_auth(binding(provider="api_key_header", header_name="X-Key"),
                            credential("api_key_header")),
                 build_auth(binding(provider="basic", credential_ref="env:B"),
                            credential("basic", username="u", password=SENTINEL))):
        shown.append(repr(auth))
    assert all(SENTINEL not in text for text in shown), shown
    assert caplog.records, "httpx debug logging was captured"
    for record in caplog.records:
        assert SENTINEL not in record.getMessage()
        assert SENTINEL not in repr(record.args)
