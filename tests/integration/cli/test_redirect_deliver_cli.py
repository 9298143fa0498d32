"""`dpone deliver` against a receiver that answers the submit with a redirect to another origin,
on both journals: nothing is sent to the redirect target, the child's effect is UNKNOWN (the
receiver may have applied the POST before redirecting) and no run resends it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from support.cli import FULL, TOKEN, TOKEN_ENV, Dpone, bind_registry
from support.transport_servers import Behaviour, LoopbackServer, read_request, respond

SYNC_ANSWER = b'{"rows_accepted":630,"rows_rejected":0,"batch_id":"stolen"}'
UNKNOWN_STATE = "final_protocol_unknown_unknown_unverified"


def _redirect(status: int, target: str) -> Behaviour:
    """Read each request (body included: the receiver may have applied it) and redirect it."""
    def behaviour(conn: socket.socket, server: LoopbackServer) -> None:
        while head := read_request(conn, server):
            path = head.split(b" ")[1].decode()
            conn.sendall(f"HTTP/1.1 {status} Redirect\r\nLocation: {target}{path}\r\n"
                         "Content-Length: 0\r\n\r\n".encode())

    return behaviour


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirected_submit_is_effect_unknown_and_nothing_reaches_the_target(
        tmp_path: Path, journal_url: str, monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with LoopbackServer(respond(200, SYNC_ANSWER)) as target, \
            LoopbackServer(_redirect(status, target.url)) as origin:
        dpone = Dpone(bind_registry(tmp_path, origin.url), tmp_path / "state", journal_url)
        run = dpone.deliver("measurements_sync", FULL, "--format", "json")
        again = dpone.deliver("measurements_sync", FULL, "--format", "json")
        posts = [r for r in origin.requests if r.startswith(b"POST ")]

    assert run.code == 4, run.out + run.err
    result = run.json()
    blocked = result["blocked"]
    assert (blocked["code"], blocked["remote_effect"]) == ("REST_DELIVERY_PROTOCOL_UNKNOWN",
                                                          "UNKNOWN")
    assert blocked["evidence"]["http_status"] == status
    assert "reconcile_delivery_key" in blocked["allowed_actions"]
    first, *rest = result["children"]
    assert first["state_name"] == UNKNOWN_STATE and first["axes"]["remote_effect"] == "UNKNOWN"
    assert {c["state_name"] for c in rest} == {"sealed"}
    assert result["checkpoint_frontier"] == 0
    assert again.code == 4
    assert again.json()["blocked"]["code"] == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert len(posts) == 1  # the first attempt only: never resent, not even by the rerun
    assert target.connections == 0 and target.requests == []
    assert TOKEN not in run.out + run.err + again.out + again.err
    inspected = dpone.inspect(result["parent_id"], "--format", "json").json()
    attempts = inspected["children"][0]["attempts"]
    assert [a["outcome"] for a in attempts] == ["submitting_response_not_recognized"]
