"""Response bounds over loopback, on both journals, through the real transport: the profile's
``observability.response_bounds`` (bytes, depth, fields, string bytes), invalid UTF-8 and the
transport's total deadline (a slow-drip answer no single read times out on), each broken by a
sync batch answer, an async job receipt and an async poll answer. Every breach fails closed
with a stable code; a mutation the receiver applied is recorded with an UNKNOWN effect (never
promoted, never resent without a certified fence); the journal shows the code afterwards."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dpone.contracts import CheckpointState, RemoteEffect
from dpone.contracts.journal import DeliveryJournalPort
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.profile import ResponseBounds
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted, DeliveryResult
from dpone.executor.transport import HttpTransport, TransportTimeouts, resolve_credentials
from dpone.executor.transport._factory import extracted_headers
from dpone.receiver import ReceiverThread
from support.delivery import POLL_PREFIX, SHORT, SUBMIT_PREFIX, Harness, seal
from support.tamper import TamperingProxy

BOUNDS = ResponseBounds(max_body_bytes=2_048, max_depth=6, max_fields=40, max_string_bytes=256)
TOTAL_S = 1.5  # the transport's total deadline for one exchange in these tests


def _with(extra: dict[str, object]) -> Callable[[bytes], bytes]:
    """The receiver's own JSON answer with ``extra`` members added (all else kept)."""
    def rewrite(body: bytes) -> bytes:
        document = json.loads(body)
        document.update(extra)
        return json.dumps(document).encode()
    return rewrite


def _nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def _invalid_utf8(body: bytes) -> bytes:
    return body[:-1] + b', "note": "caf\xe9"}'


BREACHES: dict[str, tuple[Callable[[bytes], bytes], float | None]] = {
    "over_max_body_bytes": (_with({"pad": ["x" * 40] * 60}), None),
    "over_max_depth": (_with({"deep": _nested(BOUNDS.max_depth + 1)}), None),
    "over_max_fields": (_with({"many": list(range(BOUNDS.max_fields + 1))}), None),
    "over_max_string_bytes": (_with({"note": "x" * (BOUNDS.max_string_bytes + 1)}), None),
    "invalid_utf8": (_invalid_utf8, None),
    "slow_drip": (lambda body: body, 0.25),  # 4 bytes every 0.25 s: each read is quick
}
WITHIN: dict[str, Callable[[bytes], bytes]] = {
    "over_max_body_bytes": _with({"pad": ["x" * 40] * 20}),
    "over_max_depth": _with({"deep": _nested(BOUNDS.max_depth - 1)}),
    "over_max_fields": _with({"many": list(range(BOUNDS.max_fields - 20))}),
    "over_max_string_bytes": _with({"note": "x" * BOUNDS.max_string_bytes}),
    "invalid_utf8": lambda body: body[:-1] + ', "note": "café"}'.encode(),
    "slow_drip": lambda body: body,  # the same answer at once
}


def _bounded(plan: RestDeliveryPlan) -> RestDeliveryPlan:
    snapshot = plan.profile.snapshot
    observability = snapshot.observability.model_copy(update={"response_bounds": BOUNDS})
    profile = plan.profile.model_copy(update={"snapshot": snapshot.model_copy(
        update={"observability": observability})})
    return plan.model_copy(update={"profile": profile})


@pytest.fixture
def proxy(receiver: ReceiverThread) -> Iterator[TamperingProxy]:
    with TamperingProxy(receiver.base_url) as running:
        yield running


@pytest.fixture
def bounded(tmp_path: Path, journal: DeliveryJournalPort, receiver: ReceiverThread,
            proxy: TamperingProxy) -> Iterator[Callable[[str], Harness]]:
    """``bounded(family)``: a harness whose plan has :data:`BOUNDS` and whose real transport
    (byte bound and total deadline from the profile) goes through the tampering proxy."""
    transports: list[HttpTransport] = []

    def make(family: str) -> Harness:
        sealed = seal(family, tmp_path / f"artifacts-{family}", SHORT)
        plan = _bounded(sealed.plan)
        binding = plan.binding.snapshot.model_copy(update={"authority": proxy.url})
        transport = HttpTransport(
            binding, resolve_credentials(binding),
            timeouts=TransportTimeouts(connect=2, read=TOTAL_S, write=5, pool=2, total=TOTAL_S),
            max_response_bytes=BOUNDS.max_body_bytes,
            response_headers=extracted_headers(plan.profile.snapshot))
        transports.append(transport)
        return Harness(family=family, sealed=sealed, journal=journal, transport=transport,
                       receiver=receiver, plan=plan)

    try:
        yield make
    finally:
        for transport in transports:
            transport.close()


SITES = {"sync_submit": ("sync", "POST", SUBMIT_PREFIX["sync"]),
         "async_submit": ("async", "POST", SUBMIT_PREFIX["async"]),
         "async_poll": ("async", "GET", POLL_PREFIX)}


PARSED = ("invalid_utf8", "over_max_depth", "over_max_fields", "over_max_string_bytes")
"""Breaches found while the JSON is read; the others (bytes, total deadline) in the transport."""


def _stopped(harness: Harness, result: DeliveryResult, code: str, posts: int) -> None:
    """Blocked with ``code``, child 1's effect UNKNOWN in the journal, nothing promoted, the
    receiver's one mutation never resent."""
    assert isinstance(result, DeliveryBlocked), result
    assert (result.code, result.remote_effect) == (code, RemoteEffect.UNKNOWN)
    child = harness.child(1)
    assert child.axes.remote_effect is RemoteEffect.UNKNOWN
    assert child.last_error_code == code
    assert child.axes.checkpoint_state is not CheckpointState.PROMOTED
    assert harness.parent().checkpoint_frontier == 0
    assert harness.count("POST") == posts
    ledger = harness.ledger()
    assert (ledger["mutations_total"], ledger["duplicate_mutations"]) == (1, 0)


@pytest.mark.parametrize("breach", sorted(BREACHES))
def test_a_sync_answer_past_a_bound_leaves_the_effect_unknown_and_is_not_resent(
        bounded: Callable[[str], Harness], proxy: TamperingProxy, breach: str) -> None:
    harness = bounded("sync")
    rewrite, drip = BREACHES[breach]
    rule = proxy.tamper("POST", SUBMIT_PREFIX["sync"], rewrite, drip_s=drip)

    result = harness.run()

    assert rule.fired == 1
    code = ("REST_DELIVERY_PROTOCOL_UNKNOWN" if breach in PARSED
            else "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")  # the mock's batch profile has no fence
    _stopped(harness, result, code, posts=1)


@pytest.mark.parametrize("breach", sorted(BREACHES))
def test_an_async_receipt_past_a_bound_fails_closed(
        bounded: Callable[[str], Harness], proxy: TamperingProxy, breach: str) -> None:
    harness = bounded("async")
    rewrite, drip = BREACHES[breach]
    rule = proxy.tamper("POST", SUBMIT_PREFIX["async"], rewrite, drip_s=drip)

    result = harness.run()

    assert rule.fired == 1
    if breach in PARSED:  # an accepted job without a readable receipt: never resent
        _stopped(harness, result, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN", posts=1)
        return
    # An answer that could not be read whole may have come after the effect: the certified
    # receiver fence makes a same-key replay safe, and the receiver applies the job once.
    assert isinstance(result, DeliveryCompleted), result
    assert harness.count("POST") == len(harness.topology.children) + 1
    ledger = harness.ledger()
    assert ledger["mutations_total"] == len(harness.topology.children)
    assert ledger["duplicate_mutations"] == 0


@pytest.mark.parametrize("breach", sorted(BREACHES))
def test_a_poll_answer_past_a_bound_fails_closed(
        bounded: Callable[[str], Harness], proxy: TamperingProxy, breach: str) -> None:
    harness = bounded("async")
    rewrite, drip = BREACHES[breach]
    rule = proxy.tamper("GET", POLL_PREFIX, rewrite, drip_s=drip)

    result = harness.run()

    assert rule.fired == 1
    if breach in PARSED:  # an unreadable answer about the job: its phase is never guessed
        _stopped(harness, result, "REST_DELIVERY_PROTOCOL_UNKNOWN", posts=1)
        return
    # No answer read whole: a poll is read-only, so it is repeated; nothing is resubmitted.
    assert isinstance(result, DeliveryCompleted), result
    assert harness.count("POST") == len(harness.topology.children)
    polls = sum(n for line, n in harness.requests().items() if line.startswith("GET "))
    assert polls == len(harness.topology.children) + 1
    assert harness.ledger()["duplicate_mutations"] == 0


@pytest.mark.parametrize("site", sorted(SITES))
@pytest.mark.parametrize("shape", sorted(WITHIN))
def test_answers_just_within_the_bounds_deliver(
        bounded: Callable[[str], Harness], proxy: TamperingProxy, site: str,
        shape: str) -> None:
    """The same shapes one step inside each bound (and valid UTF-8) are read as usual: the
    refusals above are the bounds', not the shapes'."""
    family, method, prefix = SITES[site]
    harness = bounded(family)
    rule = proxy.tamper(method, prefix, WITHIN[shape])

    result = harness.run()

    assert rule.fired == 1
    assert isinstance(result, DeliveryCompleted), result
    assert harness.count("POST") == len(harness.topology.children)
