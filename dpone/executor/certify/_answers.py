"""How the profile reads an answer: a submit's, a receipt poll's and a key query's.

Each reading says only what the profile's own claims let it say: a submit answer is accepted
(with its receipt), a duplicate (with the receipt it names), a refusal (another 4xx), a
throttle (a status that asks for a later attempt), unclassified, unreadable or no answer at
all; a poll answer is a phase the profile names, an expired receipt, an answer about another
key, or something the poll does not classify; a key query answer is found (naming a job),
absent, or neither. The cases turn readings into verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from dpone.contracts.profile import (
    SUBMIT_THROTTLE_STATUSES,
    Extractor,
    KeyEcho,
    OperationProfile,
)
from dpone.contracts.transport import Response
from dpone.executor.certify._probe import Answer
from dpone.executor.certify._synthetic import Submit, expected_echo
from dpone.executor.transport import ExtractionError, extract

Receipt = Mapping[str, str | int]
SubmitKind = Literal["accepted", "duplicate", "refused", "throttled", "unclassified",
                     "unreadable", "no_answer"]
PollKind = Literal["running", "terminal", "expired", "other_key", "unknown_phase",
                   "throttled", "unclassified", "no_answer"]
QueryKind = Literal["found", "absent", "other_key", "unreadable", "throttled",
                    "unclassified", "no_answer"]


@dataclass(frozen=True, slots=True)
class SubmitReading:
    kind: SubmitKind
    receipt: Receipt = field(default_factory=dict)
    """Accepted: the receipt; duplicate: the same-key receipt it names (empty if none)."""
    detail: str = ""
    status: int | None = None


@dataclass(frozen=True, slots=True)
class PollReading:
    kind: PollKind
    phase: str | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class QueryReading:
    kind: QueryKind
    receipt: Receipt = field(default_factory=dict)
    detail: str = ""


def shown_receipt(receipt: Receipt) -> str:
    return ", ".join(f"{name}={value}" for name, value in sorted(receipt.items())) or "none"


def _extract(extractors: Mapping[str, Extractor], response: Response,
             profile: OperationProfile) -> dict[str, str | int]:
    return extract(extractors, response, profile.observability.response_bounds)


def read_submit(profile: OperationProfile, answer: Answer) -> SubmitReading:
    response = answer.response
    if response is None:
        return SubmitReading("no_answer", detail=answer.shown())
    status, ack = response.status, profile.acknowledgement
    if status in ack.accepted_statuses:
        try:
            receipt = _extract(ack.receipt, response, profile)
        except ExtractionError as exc:
            return SubmitReading("unreadable", detail=f"HTTP {status} accepted, but its "
                                 f"receipt is unreadable ({exc.message})", status=status)
        return SubmitReading("accepted", receipt,
                             f"HTTP {status} accepted (receipt {shown_receipt(receipt)})", status)
    duplicate = ack.duplicate
    if duplicate is not None and status in duplicate.statuses:
        try:
            named = _extract(duplicate.same_key_receipt, response, profile)
        except ExtractionError:
            named = {}
        shown = {k: v for k, v in named.items() if k in ack.receipt} or named
        return SubmitReading("duplicate", named, f"HTTP {status} duplicate (names "
                             f"{shown_receipt(shown)})", status)
    if status in SUBMIT_THROTTLE_STATUSES:
        return SubmitReading("throttled", detail=f"HTTP {status} (asks for a later attempt)",
                             status=status)
    if 400 <= status < 500:
        return SubmitReading("refused", detail=f"HTTP {status} refused", status=status)
    return SubmitReading("unclassified", detail=f"HTTP {status}, which the profile does not "
                         "classify", status=status)


def comparable_fields(profile: OperationProfile) -> frozenset[str]:
    """The receipt fields a duplicate answer names that the accepted receipt also has."""
    duplicate = profile.acknowledgement.duplicate
    named = set(duplicate.same_key_receipt) if duplicate is not None else set()
    return frozenset(named & set(profile.acknowledgement.receipt))


def names_receipt(profile: OperationProfile, first: Receipt, reading: SubmitReading) -> bool | None:
    """Whether a duplicate answer names ``first``: None when the profile gives no receipt field
    to compare, False when the answer lacks one or names another."""
    fields = comparable_fields(profile)
    if not fields:
        return None
    return all(name in reading.receipt and str(reading.receipt[name]) == str(first.get(name))
               for name in fields)


def same_receipt(first: Receipt, other: Receipt) -> bool | None:
    """Whether two accepted receipts are one (None: there is no receipt to compare)."""
    if not first or not other:
        return None
    return {k: str(v) for k, v in first.items()} == {k: str(v) for k, v in other.items()}


def _echo_matches(echo: KeyEcho, response: Response, submit: Submit,
                  profile: OperationProfile) -> bool:
    try:
        found = _extract({"echo": echo.extractor()}, response, profile).get("echo")
    except ExtractionError:
        return False
    return found is not None and str(found) == expected_echo(echo, submit)


def read_poll(profile: OperationProfile, answer: Answer, submit: Submit) -> PollReading:
    poll = profile.acknowledgement.poll
    response = answer.response
    if poll is None or response is None:
        return PollReading("no_answer", detail=answer.shown())
    status = response.status
    if status in poll.expired_statuses:
        return PollReading("expired", detail=f"HTTP {status} (an expired receipt)")
    if status in SUBMIT_THROTTLE_STATUSES:
        return PollReading("throttled", detail=f"HTTP {status}")
    if not 200 <= status < 300:
        return PollReading("unclassified", detail=f"HTTP {status}, which the poll does not "
                           "classify")
    if poll.key_echo is not None and not _echo_matches(poll.key_echo, response, submit, profile):
        return PollReading("other_key", detail=f"HTTP {status} whose key echo is not this "
                           "submit's key")
    try:
        phase = str(_extract({"phase": poll.state}, response, profile)["phase"])
    except (ExtractionError, KeyError):
        return PollReading("unknown_phase", detail=f"HTTP {status} without a readable phase")
    if phase in poll.running:
        return PollReading("running", phase, f"HTTP {status} phase {phase}")
    if phase in (*poll.succeeded, *poll.partial, *poll.failed, *poll.cancelled):
        return PollReading("terminal", phase, f"HTTP {status} phase {phase}")
    return PollReading("unknown_phase", phase, f"HTTP {status} phase {phase!r}, which the "
                       "profile does not name")


def read_key_query(profile: OperationProfile, answer: Answer, submit: Submit) -> QueryReading:
    query = profile.acknowledgement.query_by_key
    response = answer.response
    if query is None or response is None:
        return QueryReading("no_answer", detail=answer.shown())
    status = response.status
    if status in query.found_statuses:
        if query.key_echo is not None and not _echo_matches(query.key_echo, response, submit,
                                                            profile):
            return QueryReading("other_key", detail=f"HTTP {status} whose key echo is not "
                                "this submit's key")
        try:
            receipt = _extract(query.receipt, response, profile)
        except ExtractionError as exc:
            return QueryReading("unreadable", detail=f"HTTP {status} found, but its receipt is "
                                f"unreadable ({exc.message})")
        return QueryReading("found", receipt, f"HTTP {status} found (receipt "
                            f"{shown_receipt(receipt)})")
    if status in query.absence.statuses:
        return QueryReading("absent", detail=f"HTTP {status} (nothing under the key)")
    if status in SUBMIT_THROTTLE_STATUSES:
        return QueryReading("throttled", detail=f"HTTP {status}")
    return QueryReading("unclassified", detail=f"HTTP {status}, which the query by key does "
                        "not classify")
