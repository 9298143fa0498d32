"""The binding's network policy over real loopback sockets: DNS answers resolved once per
request, checked against allow/deny networks and pinned; proxies only from the policy.

The resolver is a fake (the name ``receiver.test`` exists only here); every socket is real.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import pytest

from dpone.contracts import DponeError
from dpone.contracts.binding import NetworkPolicy
from dpone.contracts.profile import Timeouts
from dpone.executor.transport import (
    Failure,
    FailureKind,
    HttpTransport,
    Response,
    TransportPhase,
    TransportTimeouts,
)
from support.transport import binding, credential, post
from support.transport_servers import LoopbackServer, respond

LOOPBACK = NetworkPolicy(allow=("127.0.0.0/8",))
FAST = TransportTimeouts(connect=1, read=2, write=2, pool=1, total=5)


class FakeDns:
    """Answers ``receiver.test`` (and ``proxy.test``) from a script; counts the lookups."""

    def __init__(self, *answers: tuple[str, ...], proxy: tuple[str, ...] = ("127.0.0.1",)) -> None:
        self.answers = list(answers)
        self.proxy = proxy
        self.lookups: list[str] = []

    def __call__(self, host: str, port: int) -> Iterable[str]:
        self.lookups.append(host)
        if host == "proxy.test":
            return self.proxy
        if host != "receiver.test":
            raise OSError(f"no such name {host!r}")
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _transport(port: int, dns: FakeDns, policy: NetworkPolicy = LOOPBACK) -> HttpTransport:
    return HttpTransport(binding(authority=f"http://receiver.test:{port}"), credential(),
                         timeouts=FAST, network_policy=policy, resolver=dns)


def test_a_name_connects_to_its_checked_address_with_the_host_header_kept() -> None:
    dns = FakeDns(("127.0.0.1",))
    with LoopbackServer(respond(202)) as server, _transport(server.port, dns) as transport:
        outcomes = [transport.send(post()) for _ in range(3)]
    assert [o.status for o in outcomes if isinstance(o, Response)] == [202, 202, 202]
    assert dns.lookups == ["receiver.test"] * 3  # once per request, never again at connect
    assert f"Host: receiver.test:{server.port}".encode() in server.requests[0]


@pytest.mark.parametrize("answer", [("10.20.30.40",), ("127.0.0.1", "169.254.169.254"),
                                    ("0.0.0.0",), ("::ffff:10.0.0.1",)])
def test_a_name_resolving_to_a_forbidden_address_fails_closed_before_any_byte(
        answer: tuple[str, ...]) -> None:
    dns = FakeDns(answer)
    with LoopbackServer(respond(202)) as server, _transport(server.port, dns) as transport, \
            pytest.raises(DponeError) as refused:
        transport.send(post())
    assert refused.value.code == "network.address_forbidden"
    assert refused.value.spec.exit_code == 3
    assert server.connections == 0 and server.requests == []


def test_a_denied_network_wins_over_an_allowed_one() -> None:
    dns = FakeDns(("127.0.0.1",))
    policy = NetworkPolicy(allow=("127.0.0.0/8",), deny=("127.0.0.1/32",))
    with LoopbackServer(respond(202)) as server, \
            _transport(server.port, dns, policy) as transport, \
            pytest.raises(DponeError, match="outside network policy") as refused:
        transport.send(post())
    assert refused.value.code == "network.address_forbidden"
    assert server.connections == 0


def test_a_rebinding_between_two_requests_fails_closed() -> None:
    # 127.0.0.2 is allowed by the policy (and a real loopback address): only the pin refuses it.
    dns = FakeDns(("127.0.0.1",), ("127.0.0.2",))
    with LoopbackServer(respond(202)) as server, _transport(server.port, dns) as transport:
        first = transport.send(post())
        with pytest.raises(DponeError) as refused:
            transport.send(post())
    assert isinstance(first, Response) and first.status == 202
    assert refused.value.code == "network.dns_rebinding"
    assert refused.value.details["addresses"] == ["127.0.0.2"]
    assert len(server.requests) == 1


def test_an_unresolvable_name_never_starts() -> None:
    def nothing(host: str, port: int) -> Iterable[str]:
        raise OSError("name or service not known")

    with LoopbackServer(respond(202)) as server, HttpTransport(
            binding(authority=f"http://receiver.test:{server.port}"), credential(),
            timeouts=FAST, network_policy=LOOPBACK, resolver=nothing) as transport:
        outcome = transport.send(post())
    assert isinstance(outcome, Failure)
    assert (outcome.phase, outcome.kind) == (TransportPhase.NOT_STARTED, FailureKind.DNS)
    assert server.connections == 0


def test_a_resolution_slower_than_the_dns_bound_never_starts() -> None:
    """``timeouts.dns_s``: a lookup still running when the bound passes is abandoned and the
    request provably never started (the lookup would answer an allowed address later)."""
    released = threading.Event()

    def slow(host: str, port: int) -> Iterable[str]:
        released.wait(5)
        return ("127.0.0.1",)

    bounded = TransportTimeouts(connect=1, read=2, write=2, pool=1, total=5, dns=0.2)
    try:
        with LoopbackServer(respond(202)) as server, HttpTransport(
                binding(authority=f"http://receiver.test:{server.port}"), credential(),
                timeouts=bounded, network_policy=LOOPBACK, resolver=slow) as transport:
            outcome = transport.send(post())
    finally:
        released.set()
    assert isinstance(outcome, Failure), outcome
    assert (outcome.phase, outcome.kind) == (TransportPhase.NOT_STARTED, FailureKind.DNS)
    assert "timeouts.dns_s" in outcome.detail
    assert server.connections == 0


def test_the_dns_bound_comes_from_the_profile() -> None:
    timeouts = Timeouts(dns_s=3)
    assert TransportTimeouts.from_profile(timeouts).dns == 3.0


def test_environment_proxies_are_ignored_under_a_network_policy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with LoopbackServer(respond(200)) as proxy, LoopbackServer(respond(204)) as target:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                     "all_proxy"):
            monkeypatch.setenv(name, proxy.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        with _transport(target.port, FakeDns(("127.0.0.1",))) as transport:
            outcome = transport.send(post())
    assert isinstance(outcome, Response) and outcome.status == 204
    assert proxy.connections == 0 and proxy.requests == []
    assert len(target.requests) == 1


def test_the_policy_proxy_is_the_only_proxy_and_its_address_is_checked() -> None:
    with LoopbackServer(respond(202)) as proxy:
        policy = NetworkPolicy(allow=("127.0.0.0/8",), proxy=f"http://proxy.test:{proxy.port}")
        dns = FakeDns(("10.9.9.9",))  # the receiver's own answer is the proxy's business
        with _transport(8765, dns, policy) as transport:
            outcome = transport.send(post())
        assert isinstance(outcome, Response) and outcome.status == 202
        assert proxy.requests[0].startswith(b"POST http://receiver.test:8765/v1/jobs ")
        assert dns.lookups == ["proxy.test"]
        outside = NetworkPolicy(allow=("10.0.0.0/8",), proxy=f"http://proxy.test:{proxy.port}")
        with _transport(8765, dns, outside) as transport, \
                pytest.raises(DponeError) as refused:
            transport.send(post())
        assert refused.value.code == "network.address_forbidden"
        assert len(proxy.requests) == 1


def test_a_policy_and_an_explicit_proxy_are_exclusive() -> None:
    with pytest.raises(ValueError, match="network policy names the proxy"):
        HttpTransport(binding(), credential(), network_policy=LOOPBACK,
                      proxy="http://127.0.0.1:1")
