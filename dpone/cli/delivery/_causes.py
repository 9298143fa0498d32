"""The likely cause of a stopped child, named from the HTTP status its submit answer recorded.

``inspect`` shows it beside the error code: an operator searching for why a delivery stopped
with ``REST_DELIVERY_PROTOCOL_UNKNOWN`` sees that the receiver answered, say, 401. The status
is only a hint: the effect stays what the journal says (UNKNOWN unless the profile certifies
the status as refused before effect).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from dpone.contracts.documents import LikelyCause
from dpone.contracts.journal import ChildOperation

_MEANINGS: Final[Mapping[int, str]] = {
    400: "the receiver refused the request as invalid",
    401: "an authentication refusal",
    403: "an authorization refusal",
    404: "the path or resource does not exist at the receiver",
    405: "the receiver does not accept this method on the path",
    409: "a conflict with the receiver's state",
    413: "the payload is larger than the receiver accepts",
    415: "the receiver does not accept the media type",
    422: "the receiver refused the payload's content",
}
_UNRECOGNIZED: Final = frozenset({"submitting_response_not_recognized",
                                  "replay_response_not_recognized"})
_REJECTED: Final = "submitting_rejected_before_effect"


def _meaning(status: int) -> str:
    if status in _MEANINGS:
        return f"likely {_MEANINGS[status]}"
    if 500 <= status <= 599:
        return "likely a receiver fault"
    return "an answer the profile maps to no outcome"


def likely_cause(child: ChildOperation,
                 attempts: Sequence[Mapping[str, Any]]) -> LikelyCause | None:
    """The likely cause when ``child`` stopped on a submit answer or on an exchange that got
    none (a timeout: its phase and bound), else None."""
    receipt = child.receipt or {}
    failure = receipt.get("transport_failure")
    if isinstance(failure, str) and "http_status" not in receipt:
        cause = receipt.get("transport_cause") or f"no answer: {failure.replace('_', ' ')} failure"
        reached = ("the request may have reached the receiver, so the effect stays unknown"
                   if receipt.get("transport_phase") == "may_have_reached"
                   else "the request never reached the receiver")
        return LikelyCause(transport_failure=failure, summary=f"{cause}: {reached}")
    status = receipt.get("http_status")
    outcome = attempts[-1].get("outcome") if attempts else None
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    if outcome in _UNRECOGNIZED and child.last_error_code == "REST_DELIVERY_PROTOCOL_UNKNOWN":
        if outcome == "replay_response_not_recognized":
            why = ("answered to a same-key replay, it proves nothing about the earlier attempt, "
                   "whose effect stays unknown")
        else:
            why = ("the profile does not certify it as refused before effect, so the effect "
                   "stays unknown")
        summary = f"receiver answered {status}: {_meaning(status)}; {why}"
    elif outcome == _REJECTED and child.last_error_code == "credential.rejected":
        summary = (f"receiver answered {status}: {_meaning(status)} the profile certifies as "
                   "refused before effect; nothing was applied")
    else:
        return None
    return LikelyCause(http_status=status, summary=summary)
