"""The phase matrix over real loopback sockets: what provably sent nothing, what may have."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from dpone.executor.transport import (
    Failure,
    FailureKind,
    HttpTransport,
    OutboundRequest,
    ReplayableBody,
    Response,
    TransportOutcome,
    TransportPhase,
    TransportTimeouts,
)
from support.common import free_port
from support.transport import binding, credential, post
from support.transport_servers import (
    FullBacklog,
    LoopbackServer,
    Pki,
    close_after_head,
    close_after_read,
    dribble,
    never_answer,
    never_read,
    reset_after_read,
    respond,
)

NOT, MAY = TransportPhase.NOT_STARTED, TransportPhase.MAY_HAVE_REACHED
FAST = TransportTimeouts(connect=0.5, read=0.5, write=0.5, pool=0.3, total=5)


def _send(authority: str, request: OutboundRequest | None = None,
          timeouts: TransportTimeouts = FAST, **kwargs: object) -> TransportOutcome:
    with HttpTransport(binding(authority=authority), credential(), timeouts=timeouts,
                       **kwargs) as transport:  # type: ignore[arg-type]
        return transport.send(request or post())


def _failure(outcome: TransportOutcome, phase: TransportPhase, kind: FailureKind) -> Failure:
    assert isinstance(outcome, Failure), outcome
    assert (outcome.phase, outcome.kind) == (phase, kind), outcome
    assert outcome.cause is not None
    return outcome


def _big_body(mib: int = 64) -> OutboundRequest:
    chunk = b"x" * (1 << 20)
    return OutboundRequest(method="POST", path="/v1/jobs", content_type="text/csv",
                           body=ReplayableBody(lambda: (chunk for _ in range(mib))),
                           content_length=mib << 20)


def test_sanity_a_real_response() -> None:
    with LoopbackServer(respond(202, b'{"job_id":"j-1"}')) as server:
        outcome = _send(server.url)
    assert isinstance(outcome, Response) and outcome.status == 202
    assert outcome.body == b'{"job_id":"j-1"}'


def test_connection_refused_is_not_started() -> None:
    _failure(_send(f"http://127.0.0.1:{free_port()}"), NOT, FailureKind.CONNECT)


def test_connect_timeout_is_not_started() -> None:
    with FullBacklog() as port:
        started = time.monotonic()
        _failure(_send(f"http://127.0.0.1:{port}"), NOT, FailureKind.CONNECT_TIMEOUT)
    assert time.monotonic() - started < 3


def test_pool_timeout_is_not_started_and_sends_nothing() -> None:
    with LoopbackServer(never_answer) as server:
        timeouts = TransportTimeouts(connect=1, read=1.5, write=1, pool=0.3, total=5)
        transport = HttpTransport(binding(authority=server.url), credential(), timeouts=timeouts,
                                  max_connections=1)
        holder: list[TransportOutcome] = []
        thread = threading.Thread(target=lambda: holder.append(transport.send(post())))
        thread.start()
        deadline = time.monotonic() + 2
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        outcome = transport.send(post(body=b"second"))
        thread.join()
        transport.close()
    _failure(outcome, NOT, FailureKind.POOL_TIMEOUT)
    _failure(holder[0], MAY, FailureKind.READ_TIMEOUT)
    assert len(server.requests) == 1 and server.connections == 1


def test_server_closing_after_reading_the_request_may_have_reached() -> None:
    with LoopbackServer(close_after_read) as server:
        _failure(_send(server.url), MAY, FailureKind.PROTOCOL)
    assert server.requests and server.requests[0].startswith(b"POST /v1/jobs")


def test_read_timeout_may_have_reached() -> None:
    with LoopbackServer(never_answer) as server:
        _failure(_send(server.url), MAY, FailureKind.READ_TIMEOUT)
    assert len(server.requests) == 1


def test_connection_reset_after_the_request_may_have_reached() -> None:
    with LoopbackServer(reset_after_read) as server:
        _failure(_send(server.url), MAY, FailureKind.READ)


def test_write_timeout_may_have_reached() -> None:
    with LoopbackServer(never_read) as server:
        _failure(_send(server.url, _big_body()), MAY, FailureKind.WRITE_TIMEOUT)


def test_server_closing_during_the_body_may_have_reached() -> None:
    # httpcore swallows the write error and reads the (absent) response instead.
    with LoopbackServer(close_after_head) as server:
        failure = _send(server.url, _big_body())
    assert isinstance(failure, Failure) and failure.phase is MAY
    assert failure.kind in {FailureKind.PROTOCOL, FailureKind.READ, FailureKind.WRITE}


def test_total_deadline_bounds_a_dribbling_response() -> None:
    timeouts = TransportTimeouts(connect=1, read=1, write=1, pool=1, total=0.6)
    with LoopbackServer(dribble) as server:
        started = time.monotonic()
        failure = _failure(_send(server.url, timeouts=timeouts), MAY, FailureKind.TOTAL_DEADLINE)
        elapsed = time.monotonic() - started
    assert failure.status == 200
    assert elapsed < 0.6 + 0.5


def test_tls_handshake_failure_is_not_started_and_sends_no_request() -> None:
    def plain(conn: socket.socket, server: LoopbackServer) -> None:
        server.raw.append(conn.recv(65536))
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    with LoopbackServer(plain) as server:
        outcome = _send(f"https://127.0.0.1:{server.port}")
    _failure(outcome, NOT, FailureKind.TLS)
    assert all(b"POST" not in raw and b"/v1/jobs" not in raw for raw in server.raw)


def test_untrusted_certificate_is_not_started(pki: Pki) -> None:
    with LoopbackServer(respond(), tls=pki.server_context()) as server:
        outcome = _send(server.url)
    _failure(outcome, NOT, FailureKind.TLS)
    assert server.requests == []


def test_trusted_ca_bundle_reaches_the_server(pki: Pki) -> None:
    with LoopbackServer(respond(201), tls=pki.server_context()) as server:
        outcome = _send(server.url, ca_bundle=pki.ca_file)
    assert isinstance(outcome, Response) and outcome.status == 201


def test_unknown_host_is_not_started() -> None:
    try:
        socket.getaddrinfo("receiver.dpone-test.invalid", 443)
    except OSError:
        pass
    else:  # pragma: no cover - a resolver that answers for .invalid
        pytest.skip("this resolver answers for .invalid names")
    _failure(_send("https://receiver.dpone-test.invalid"), NOT, FailureKind.DNS)
