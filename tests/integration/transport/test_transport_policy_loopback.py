"""Redirects, proxies, OAuth and mTLS over loopback."""

from __future__ import annotations

import logging
import socket
import traceback

import httpx
import pytest

from dpone.executor.transport import (
    Failure,
    HttpTransport,
    Response,
    TransportTimeouts,
    resolve_credentials,
)
from support.transport import SENTINEL, binding, credential, post
from support.transport_servers import LoopbackServer, Pki, read_request, respond

FAST = TransportTimeouts(connect=1, read=2, write=2, pool=1, total=5)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_is_returned_and_its_location_never_contacted(status: int) -> None:
    with LoopbackServer(respond(200)) as target:
        location = f"{target.url}/stolen"
        with LoopbackServer(respond(status, b"", {"Location": location})) as origin, \
                HttpTransport(binding(authority=origin.url), credential(),
                              timeouts=FAST) as transport:
            outcome = transport.send(post())
        assert isinstance(outcome, Response) and outcome.status == status
        assert outcome.headers["location"] == location
        assert len(origin.requests) == 1
        assert target.connections == 0 and target.requests == []


def test_environment_proxy_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    with LoopbackServer(respond(200)) as proxy, LoopbackServer(respond(204)) as target:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
            monkeypatch.setenv(name, proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with httpx.Client(trust_env=True) as honouring:  # control: the environment is live
            honouring.get(f"{target.url}/control")
        assert len(proxy.requests) == 1
        with HttpTransport(binding(authority=target.url), credential(),
                           timeouts=FAST) as transport:
            outcome = transport.send(post())
        assert isinstance(outcome, Response) and outcome.status == 204
        assert len(proxy.requests) == 1
        assert target.requests[-1].startswith(b"POST /v1/jobs ")


def test_explicit_proxy_is_used() -> None:
    with LoopbackServer(respond(202)) as proxy:
        with HttpTransport(binding(authority="http://receiver.example.test"), credential(),
                           timeouts=FAST, proxy=proxy.url) as transport:
            outcome = transport.send(post())
        assert isinstance(outcome, Response) and outcome.status == 202
        assert proxy.requests[0].startswith(b"POST http://receiver.example.test/v1/jobs ")


class _OAuthReceiver:
    """Token endpoint plus a resource that rejects the first token it sees."""

    def __init__(self) -> None:
        self.tokens_issued = 0
        self.rejected_first = False
        self.resource_auth: list[bytes] = []

    def __call__(self, conn: socket.socket, server: LoopbackServer) -> None:
        while head := read_request(conn, server):
            if head.startswith(b"POST /oauth/token "):
                self.tokens_issued += 1
                body = (b'{"access_token":"tok-%d-' % self.tokens_issued + SENTINEL.encode()
                        + b'","token_type":"Bearer","expires_in":3600}')
                status = b"200 OK"
            else:
                auth = next(line for line in head.split(b"\r\n")
                            if line.lower().startswith(b"authorization:"))
                self.resource_auth.append(auth)
                status, body = (b"200 OK", b'{"job_id":"j"}')
                if not self.rejected_first:
                    self.rejected_first = True
                    status, body = b"401 Unauthorized", b"{}"
            conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: %d\r\n\r\n" % len(body)
                         + body)


def test_oauth_over_loopback_fetches_reuses_and_refreshes_once(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    receiver = _OAuthReceiver()
    env = {"DPONE_CONN_RX_CLIENT_ID": "client-1", "DPONE_CONN_RX_CLIENT_SECRET": SENTINEL}
    shown: list[str] = []
    with LoopbackServer(receiver) as server:
        bound = binding(authority=server.url, provider="oauth2_client_credentials",
                        credential_ref="conn:rx", token_path="/oauth/token")
        cred = resolve_credentials(bound, env=env)
        with HttpTransport(bound, cred, timeouts=FAST) as transport:
            outcomes = [transport.send(post()) for _ in range(3)]
            shown += [repr(transport), repr(cred), str(cred), repr(outcomes)]
    assert [o.status for o in outcomes if isinstance(o, Response)] == [200, 200, 200]
    assert receiver.tokens_issued == 2
    assert len(receiver.resource_auth) == 4
    assert receiver.resource_auth[0].endswith(b"tok-1-" + SENTINEL.encode())
    assert all(a.endswith(b"tok-2-" + SENTINEL.encode()) for a in receiver.resource_auth[1:])
    with LoopbackServer(lambda c, s: None) as dead:
        bound = binding(authority=dead.url, provider="oauth2_client_credentials",
                        credential_ref="conn:rx", token_path="/oauth/token")
        with HttpTransport(bound, resolve_credentials(bound, env=env),
                           timeouts=FAST) as transport:
            failure = transport.send(post())
    assert isinstance(failure, Failure)
    shown += [repr(failure), failure.detail,
              "".join(traceback.format_exception(failure.cause))]  # type: ignore[arg-type]
    assert all(SENTINEL not in text for text in shown)
    assert caplog.records
    assert all(SENTINEL not in record.getMessage() for record in caplog.records)


def test_mtls_presents_the_client_certificate(pki: Pki) -> None:
    seen: list[dict[str, object]] = []

    def behaviour(conn: socket.socket, server: LoopbackServer) -> None:
        seen.append(conn.getpeercert() or {})  # type: ignore[attr-defined]
        respond(200)(conn, server)

    env = {"DPONE_CONN_RX_CERT_FILE": str(pki.client_cert),
           "DPONE_CONN_RX_KEY_FILE": str(pki.client_key)}
    with LoopbackServer(behaviour, tls=pki.server_context(require_client=True)) as server:
        bound = binding(authority=server.url, provider="mtls", credential_ref="conn:rx")
        with HttpTransport(bound, resolve_credentials(bound, env=env), timeouts=FAST,
                           ca_bundle=pki.ca_file) as transport:
            outcome = transport.send(post())
    assert isinstance(outcome, Response) and outcome.status == 200
    subject = dict(item[0] for item in seen[0]["subject"])  # type: ignore[attr-defined]
    assert subject["commonName"] == "client-1"
