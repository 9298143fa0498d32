"""HttpTransport over httpx.MockTransport: request shape, refusals, bounds and the phase table."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from dpone.contracts import DponeError
from dpone.contracts.profile import Timeouts
from dpone.executor.transport import (
    PHASE_TABLE,
    Failure,
    FailureKind,
    HttpTransport,
    OutboundRequest,
    Response,
    TransportPhase,
    TransportTimeouts,
)
from support.transport import binding, credential, post


def _transport(handler: object, **kwargs: object) -> HttpTransport:
    return HttpTransport(binding(), credential(), transport=httpx.MockTransport(handler),  # type: ignore[arg-type]
                         **kwargs)  # type: ignore[arg-type]


def test_request_carries_path_query_semantic_headers_and_exact_length() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        return httpx.Response(202, json={"job_id": "j"}, headers={"Retry-After": "5",
                                                                  "X-Internal": "dropped"})

    body = b"a,b\n1,2\n"
    request = OutboundRequest(method="POST", path="/v1/jobs/a%2Fb", content_type="text/csv",
                              body=[body[:3], body[3:]], content_length=len(body),
                              query=(("mode", "append"), ("mode", "strict")),
                              headers=(("Idempotency-Key", "sha256:abc"),))
    with _transport(handler) as transport:
        outcome = transport.send(request)
    assert isinstance(outcome, Response)
    assert outcome.status == 202 and outcome.body == b'{"job_id":"j"}'
    assert outcome.headers["retry-after"] == "5"
    assert "x-internal" not in outcome.headers
    sent = seen[0]
    assert str(sent.url) == "https://receiver.example.test/v1/jobs/a%2Fb?mode=append&mode=strict"
    assert sent.headers["Content-Length"] == str(len(body))
    assert "Transfer-Encoding" not in sent.headers
    assert sent.headers["Content-Type"] == "text/csv"
    assert sent.headers["Idempotency-Key"] == "sha256:abc"
    assert sent.headers["Accept-Encoding"] == "identity"
    assert sent.headers["User-Agent"].startswith("dpone/")
    assert sent.content == body


def test_get_without_body_sends_no_content_length() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"phase": "running"})

    with _transport(handler) as transport:
        transport.send(OutboundRequest(method="GET", path="/v1/jobs/j"))
    assert "content-length" not in seen[0].headers


@pytest.mark.parametrize(("path", "code"), [
    ("https://evil.test/x", "template.absolute_url"),
    ("//evil.test/x", "template.absolute_url"),
    ("v1/jobs", "template.absolute_url"),
    ("/v1/jobs?x=1", "template.absolute_url"),
    ("/v1/jobs#frag", "template.absolute_url"),
    ("/v1\\jobs", "template.absolute_url"),
    ("/v1/jobs\r\nHost: evil", "template.absolute_url"),
    ("/v1/ jobs", "template.absolute_url"),
    ("/v1/jöbs", "template.absolute_url"),
    ("/v1/../admin", "template.traversal"),
    ("/v1/%2e%2e/admin", "template.traversal"),
    ("/v1/./jobs", "template.traversal"),
])
def test_paths_that_leave_the_authority_are_refused(path: str, code: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("nothing may be sent")

    with _transport(handler) as transport, pytest.raises(DponeError) as caught:
        transport.send(post(path=path))
    assert caught.value.code == code


@pytest.mark.parametrize("name", ["Authorization", "host", "Content-Length", "Transfer-Encoding",
                                  "Cookie", "Proxy-Authorization", "Connection"])
def test_transport_owned_headers_are_refused(name: str) -> None:
    with _transport(lambda r: httpx.Response(200)) as transport, \
            pytest.raises(DponeError) as caught:
        transport.send(post(headers=((name, "x"),)))
    assert caught.value.code == "profile.forbidden_header"


def test_header_values_with_control_characters_are_refused() -> None:
    with _transport(lambda r: httpx.Response(200)) as transport, \
            pytest.raises(DponeError) as caught:
        transport.send(post(headers=(("X-Trace", "a\r\nX-Evil: 1"),)))
    assert caught.value.code == "template.control_character"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirects_are_responses_never_followed(status: int) -> None:
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        return httpx.Response(status, headers={"Location": "https://receiver.example.test/other"})

    with _transport(handler) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Response) and outcome.status == status
    assert outcome.headers["location"] == "https://receiver.example.test/other"
    assert paths == ["/v1/jobs"]


def test_declared_oversized_response_is_refused_without_reading() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Length": "1000000"},
                              stream=httpx.ByteStream(b"x" * 1_000_000))

    with _transport(handler, max_response_bytes=1024) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Failure)
    assert outcome.phase is TransportPhase.RESPONSE_TOO_LARGE and outcome.status == 200


def test_streamed_oversized_response_is_refused() -> None:
    class Chunks(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            for _ in range(100):
                yield b"y" * 512

    with _transport(lambda r: httpx.Response(200, stream=Chunks()),
                    max_response_bytes=4096) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Failure) and outcome.kind is FailureKind.RESPONSE_TOO_LARGE


def test_response_exactly_at_the_bound_is_kept() -> None:
    with _transport(lambda r: httpx.Response(200, content=b"z" * 1024),
                    max_response_bytes=1024) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Response) and len(outcome.body) == 1024


@pytest.mark.parametrize(("chunks", "length"), [([b"abc", b"def"], 4), ([b"ab"], 3)])
def test_body_length_mismatch_may_have_reached(chunks: list[bytes], length: int) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        return httpx.Response(200)

    with _transport(handler) as transport:
        outcome = transport.send(OutboundRequest(method="POST", path="/x", body=chunks,
                                                 content_length=length))
    assert isinstance(outcome, Failure)
    assert (outcome.phase, outcome.kind) == (TransportPhase.MAY_HAVE_REACHED,
                                             FailureKind.BODY_SOURCE)


def test_failing_body_source_may_have_reached() -> None:
    def broken() -> Iterator[bytes]:
        yield b"abc"
        raise OSError("artifact store went away")

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        return httpx.Response(200)

    with _transport(handler) as transport:
        outcome = transport.send(OutboundRequest(method="POST", path="/x", body=broken(),
                                                 content_length=6))
    assert isinstance(outcome, Failure) and outcome.kind is FailureKind.BODY_SOURCE
    assert outcome.phase is TransportPhase.MAY_HAVE_REACHED
    assert isinstance(outcome.cause, Exception)
    assert isinstance(outcome.cause.__cause__, OSError)


@pytest.mark.parametrize(("exc_type", "kind", "phase"), PHASE_TABLE,
                         ids=[row[0].__name__ for row in PHASE_TABLE])
def test_phase_table_rows(exc_type: type[httpx.TransportError], kind: FailureKind,
                          phase: TransportPhase) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc_type("simulated", request=request)

    with _transport(handler) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Failure)
    assert (outcome.kind, outcome.phase) == (kind, phase)
    assert isinstance(outcome.cause, exc_type)
    assert outcome.detail == f"{exc_type.__name__}: simulated"


def test_deadline_already_passed_sends_nothing() -> None:
    ticks = iter([0.0, 500.0, 500.0, 500.0])

    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("nothing may be sent")

    transport = HttpTransport(binding(), credential(), transport=httpx.MockTransport(handler),
                              timeouts=TransportTimeouts(total=10), clock=lambda: next(ticks))
    with transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Failure)
    assert (outcome.phase, outcome.kind) == (TransportPhase.NOT_STARTED,
                                             FailureKind.TOTAL_DEADLINE)


def test_environment_proxy_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/ca.pem")
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(204)

    with _transport(handler) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Response) and outcome.status == 204
    assert seen == ["https://receiver.example.test/v1/jobs"]


@pytest.mark.parametrize("authority", ["ftp://h", "https://user:pw@h", "https://h/base",
                                       "https://h?x=1", "https://"])
def test_authority_must_be_scheme_host_port(authority: str) -> None:
    with pytest.raises(DponeError) as caught:
        HttpTransport(binding(authority="https://h").model_copy(update={"authority": authority}),
                      credential())
    assert caught.value.code == "binding.invalid_authority"


def test_timeouts_from_profile() -> None:
    vector = TransportTimeouts.from_profile(Timeouts(connect_s=3, tls_s=8, read_s=20, write_s=30,
                                                     pool_s=2, request_total_s=90))
    assert vector == TransportTimeouts(connect=8, read=20, write=30, pool=2, total=90)
    plain = TransportTimeouts.from_profile(Timeouts(connect_s=3, tls_s=8), tls=False)
    assert plain.connect == 3
    with pytest.raises(ValueError):
        TransportTimeouts(total=0)


def test_a_cookie_the_receiver_sets_is_never_sent_back() -> None:
    """A request is sent exactly as sealed: a ``Set-Cookie`` of one answer adds no ``Cookie``
    header to any later request (a submit, a replay or a receipt poll)."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={}, headers=[
            ("Set-Cookie", "AWSALB=sticky; Path=/"),
            ("Set-Cookie", "session=abc; Domain=receiver.example.test; Path=/; Secure")])

    with _transport(handler) as transport:
        for _ in range(3):
            assert isinstance(transport.send(post()), Response)
    assert len(seen) == 3
    assert all("cookie" not in request.headers for request in seen)
