"""A wrong or missing credential, on both journals: the child waits with nothing applied and is
delivered once, with the same delivery key, after the credential is fixed.

A 401 the profile certifies as refused before effect is ``credential.rejected`` (NONE_PROVEN,
exit class 3); an uncertified 401 stays ``REST_DELIVERY_PROTOCOL_UNKNOWN``, and so does a 401 to
a same-key replay (it proves nothing of the earlier attempt). A credential that cannot be
resolved leaves the child in ``retry_wait``; a malformed request stays ``final_not_started``.
"""

from __future__ import annotations

import pytest

from dpone.contracts import ERROR_CATALOG, DponeError, ExitClass, RemoteEffect
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted, DeliveryResult
from dpone.executor.transport import (
    Credential,
    HttpTransport,
    OutboundRequest,
    Secret,
    TransportOutcome,
    TransportTimeouts,
)
from support.delivery import TOKEN_ENV, FirstSendTo, Harness, HarnessFactory, no_sleep

FAMILIES = pytest.mark.parametrize("family", ["sync", "async"])
FIRST_OUTCOME = {"sync": "submitting_sync_success", "async": "submitting_async_receipt_accepted"}


def _wrong_token(h: Harness) -> HttpTransport:
    """The real transport of ``h``'s binding with a token the receiver refuses (401)."""
    binding = h.plan.binding.snapshot.model_copy(update={"authority": h.receiver.base_url})
    return HttpTransport(binding, Credential("bearer", {"token": Secret("not-the-token")}),
                         timeouts=TransportTimeouts(connect=2, read=10, write=10, pool=2,
                                                    total=20))


def _run_with_a_wrong_token(h: Harness) -> DeliveryResult:
    """One run of ``h`` through a transport whose token the receiver refuses."""
    wrong = _wrong_token(h)
    try:
        return h.run(transport=wrong)
    finally:
        wrong.close()


def _certifying(plan: RestDeliveryPlan, statuses: tuple[int, ...]) -> RestDeliveryPlan:
    """``plan`` whose profile certifies ``statuses`` as refused before effect."""
    snapshot = plan.profile.snapshot
    ack = snapshot.acknowledgement.model_copy(
        update={"rejected_before_effect_statuses": statuses})
    profile = plan.profile.model_copy(
        update={"snapshot": snapshot.model_copy(update={"acknowledgement": ack})})
    return plan.model_copy(update={"profile": profile})


class _Unresolvable:
    """A transport built on the first request, as the CLI's: the credential is not there."""

    def send(self, request: OutboundRequest) -> TransportOutcome:
        raise DponeError(code="credential.unavailable",
                         message=f"environment variable {TOKEN_ENV} is not set or empty")

    def close(self) -> None:
        pass


class _Malformed:
    """A transport refusing the request itself before sending any byte."""

    def send(self, request: OutboundRequest) -> TransportOutcome:
        raise DponeError(code="template.traversal", message="the request path has a '..'")

    def close(self) -> None:
        pass


def _delivered_once_with_the_same_key(h: Harness, family: str, first_outcome: str) -> None:
    """The rerun with the right credential: child 1 applied once, as attempt 2, same key."""
    key = h.child(1).delivery_key
    result = h.run()
    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == len(h.topology.children)
    assert result.children[0].attempt_ordinal == 2
    assert h.outcomes(1) == [(1, first_outcome), (2, FIRST_OUTCOME[family])]
    assert h.child(1).delivery_key == key
    markers = [h.store.get_bytes(a["marker_key"]) for a in h.journal.list_attempts(
        h.child(1).operation_id)]
    assert all(key.encode() in marker for marker in markers)
    ledger = h.ledger()
    assert ledger["mutations_total"] == len(h.topology.children)
    assert ledger["duplicate_mutations"] == 0
    assert ledger["rows_by_key"][h.sealed.mutation_key(1)] == \
        h.topology.children[0].descriptor.row_count


@FAMILIES
def test_a_certified_401_is_credential_rejected_then_the_right_token_delivers_once(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family)
    assert h.plan.profile.snapshot.acknowledgement.rejected_before_effect_statuses == (401, 403)
    result = _run_with_a_wrong_token(h)

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "credential.rejected"
    assert ERROR_CATALOG[result.code].exit_class is ExitClass.UNAVAILABLE
    assert result.remote_effect is RemoteEffect.NONE_PROVEN
    assert result.evidence["state_name"] == "retry_wait"
    assert result.evidence["http_status"] == 401
    assert result.evidence["credential_ref"] == h.plan.binding.snapshot.credential_ref
    assert result.allowed_actions == ("fix_credential", "resume_delivery")
    child = h.child(1)
    assert (child.state_name, child.axes.remote_effect) == ("retry_wait", "NONE_PROVEN")
    assert child.last_error_code == "credential.rejected"
    assert h.outcomes(1) == [(1, "submitting_rejected_before_effect")]
    assert h.ledger()["mutations_total"] == 0
    assert h.count("POST") == 1  # refused once, never retried with the same credential
    if len(h.topology.children) > 1:
        assert h.child(2).state_name == "sealed"

    _delivered_once_with_the_same_key(h, family, "submitting_rejected_before_effect")


@FAMILIES
def test_an_uncertified_401_stays_protocol_unknown_and_is_never_resent(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family)
    h.plan = _certifying(h.plan, ())
    result = _run_with_a_wrong_token(h)

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert result.remote_effect is RemoteEffect.UNKNOWN
    assert result.evidence["http_status"] == 401
    assert h.child(1).state_name == "final_protocol_unknown_unknown_unverified"
    assert h.outcomes(1) == [(1, "submitting_response_not_recognized")]
    before = h.requests()
    again = h.run()  # the right token changes nothing: the effect is not proven absent
    assert isinstance(again, DeliveryBlocked) and again.code == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert h.requests() == before


def test_a_401_to_a_same_key_replay_proves_nothing_of_the_earlier_attempt(
        harness: HarnessFactory) -> None:
    h = harness("async")
    assert h.plan.fence.certified_in_environment
    h.fail_submit("commit_then_drop")  # the first attempt may have applied
    wrong = _wrong_token(h)
    transport = FirstSendTo(h.transport, wrong)
    result = h.run(transport=transport)

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert result.remote_effect is RemoteEffect.UNKNOWN
    assert h.outcomes(1) == [(1, "submitting_fenced_replay"),
                             (2, "replay_response_not_recognized")]
    assert h.ledger()["mutations_total"] == 1


@FAMILIES
def test_a_missing_credential_leaves_the_child_resumable_with_the_same_delivery_key(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family)

    with pytest.raises(DponeError) as missing:
        h.run(transport=_Unresolvable())

    assert missing.value.code == "credential.unavailable"
    child = h.child(1)
    assert (child.state_name, child.axes.remote_effect) == ("retry_wait", "NONE_PROVEN")
    assert child.last_error_code == "credential.unavailable"
    assert h.outcomes(1) == [(1, "submitting_not_started_retry")]
    assert h.requests() == {}  # not one request reached the receiver

    _delivered_once_with_the_same_key(h, family, "submitting_not_started_retry")


def test_a_request_the_transport_refuses_as_malformed_still_ends_not_started(
        harness: HarnessFactory) -> None:
    h = harness("sync")

    with pytest.raises(DponeError) as refused:
        h.run(transport=_Malformed())

    assert refused.value.code == "template.traversal"
    assert h.child(1).state_name == "final_not_started"
    assert h.outcomes(1) == [(1, "submitting_not_started_final")]
    again = h.run(sleep=no_sleep)
    assert isinstance(again, DeliveryBlocked) and again.code == "template.traversal"
    assert h.requests() == {}

