"""The transport of a plan keeps the response headers its profile's certified extractors read
(here a key echo in a header), and still drops every other header."""

from __future__ import annotations

from dpone.compiler import compile_workload
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.profile import KeyEcho, ResponseBounds
from dpone.executor.supervisor import echo_matches
from dpone.executor.transport import OutboundRequest, Response, transport_for
from support.common import EXAMPLES
from support.transport import credential
from support.transport_servers import LoopbackServer, respond

OURS = "3f" * 32 + ".csv.gz"


def _plan(authority: str, echo: KeyEcho | None) -> RestDeliveryPlan:
    plan = compile_workload(EXAMPLES / "workloads" / "measurements_async.yaml", EXAMPLES).plan
    profile = plan.profile.snapshot
    assert profile.acknowledgement.poll is not None
    poll = profile.acknowledgement.poll.model_copy(update={"key_echo": echo})
    ack = profile.acknowledgement.model_copy(update={"poll": poll})
    snapshot = profile.model_copy(update={"acknowledgement": ack})
    return plan.model_copy(update={
        "profile": plan.profile.model_copy(update={"snapshot": snapshot}),
        "binding": plan.binding.model_copy(update={
            "snapshot": plan.binding.snapshot.model_copy(update={"authority": authority})})})


def _poll(plan: RestDeliveryPlan) -> Response:
    with transport_for(plan, credential()) as transport:
        answer = transport.send(OutboundRequest(method="GET", path="/mock/v1/dataset-jobs/j-1"))
    assert isinstance(answer, Response), answer
    return answer


def test_a_header_key_echo_reaches_the_observer_and_nothing_else_does() -> None:
    echo = KeyEcho(header="X-Job-Key")
    headers = {"X-Job-Key": OURS, "X-Unrelated": "dropped"}
    with LoopbackServer(respond(200, b'{"phase":"complete"}', headers=headers)) as server:
        certified = _poll(_plan(server.url, echo))
        uncertified = _poll(_plan(server.url, None))

    assert certified.headers["x-job-key"] == OURS
    assert "x-unrelated" not in certified.headers
    assert echo_matches(echo, OURS, certified, ResponseBounds())
    assert "x-job-key" not in uncertified.headers
