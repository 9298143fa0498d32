"""Absolute receipt locations over real loopback sockets: the transport stamps the origin it sent
to, and a location is a receipt only on exactly that origin; a foreign location is refused and
never contacted."""

from __future__ import annotations

import socket

import pytest

from dpone.contracts.binding import NetworkPolicy
from dpone.contracts.profile import Extractor
from dpone.executor.transport import (
    ExtractionError,
    HttpTransport,
    Response,
    TransportTimeouts,
    extract,
)
from support.transport import binding, credential, post
from support.transport_servers import Behaviour, LoopbackServer, read_request, respond

FAST = TransportTimeouts(connect=1, read=2, write=2, pool=1, total=5)
RECEIPT = {"id": Extractor.model_validate(
    {"header": "Location", "location": {"path_prefix": "/v1/jobs/"}})}


def _accepted(location: str | None = None) -> Behaviour:
    """Answer 202 with ``Location: <location>`` (default: this server's own absolute URL)."""
    def behaviour(conn: socket.socket, server: LoopbackServer) -> None:
        while read_request(conn, server):
            where = location or f"{server.url}/v1/jobs/j-7"
            conn.sendall(f"HTTP/1.1 202 Accepted\r\nLocation: {where}\r\n"
                         "Content-Length: 0\r\n\r\n".encode())

    return behaviour


def _submit(server: LoopbackServer) -> Response:
    with HttpTransport(binding(authority=server.url), credential(), timeouts=FAST,
                       network_policy=NetworkPolicy(allow=("127.0.0.0/8",))) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Response) and outcome.status == 202
    return outcome


def test_an_absolute_location_of_the_binding_origin_is_the_receipt() -> None:
    with LoopbackServer(_accepted()) as server:
        outcome = _submit(server)
    assert outcome.origin == f"http://127.0.0.1:{server.port}"
    assert outcome.headers["location"] == f"{server.url}/v1/jobs/j-7"  # evidence kept raw
    assert extract(RECEIPT, outcome) == {"id": "j-7"}


@pytest.mark.parametrize("foreign", ["other-port", "other-host"])
def test_a_foreign_location_is_refused_and_never_contacted(foreign: str) -> None:
    with LoopbackServer(respond(200)) as elsewhere:
        location = (f"{elsewhere.url}/v1/jobs/j-7" if foreign == "other-port"
                    else f"http://localhost:{elsewhere.port}/v1/jobs/j-7")
        with LoopbackServer(_accepted(location)) as server:
            outcome = _submit(server)
        with pytest.raises(ExtractionError) as refused:
            extract(RECEIPT, outcome)
    assert refused.value.reason.value == "location_refused"
    assert elsewhere.connections == 0
