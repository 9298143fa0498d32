"""The supervisor's decisions, pure: no port, no I/O, no clock (time and randomness come in as
values). What the shells (``_submit``, ``_observe``) then carry out through the journal writer.

* :class:`Family`: what differs between a synchronous batch and an asynchronous bulk job, read
  from the profile in one place (:func:`family_of`): children in flight (``width``), promotion
  ``stride``, whether a receipt is polled (``observes``), where counters come from (``checks``);
* :func:`classify`: what a submit answer is (sync counters, async receipt, a duplicate with a
  same-key receipt, a bare duplicate, a throttle, a certified refusal before effect, unknown);
* :func:`submit_move`: the next move of a submit after one exchange: :class:`Record` the answer,
  :class:`RetryLater` (the request provably never started), :class:`Replay` the same key (a
  certified fence with budget left), or :class:`Stop` with a guarded step and a code;
* :func:`counter_verdict`: what a receiver's counters prove about a child's remote effect, which
  the supervisor's verification and reconciliation's read-only poll both use, so the two can
  never disagree; :func:`verification`: the step and stop code a verdict takes;
* the stop tables: which recorded submit or poll outcome stops the run, with which code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from dpone.contracts import DponeError
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.profile import SUBMIT_THROTTLE_STATUSES, Backoff, Extractor, OperationProfile
from dpone.contracts.sealed import SealedChild
from dpone.contracts.state import StateName as S
from dpone.contracts.transport import Failure, Response, TransportPhase, failure_facts
from dpone.executor.supervisor._actions import fence_certified
from dpone.executor.supervisor._transitions import (
    MAY_HAVE_REACHED_UNFENCED,
    NO_EFFECT,
    NOT_PROVABLE,
    REPLAY_BUDGET_EXHAUSTED,
    THROTTLED_BEYOND_BUDGET,
    VERIFIED_FULL,
    VERIFIED_PARTIAL,
    PollOutcome,
    ResponseOutcome,
    Step,
)
from dpone.executor.transport import (
    BudgetExceeded,
    ExtractionError,
    extract,
    full_jitter_delay,
    next_delay,
    retry_after_seconds,
)

UNKNOWN: Final = "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"


# --- the protocol families ---------------------------------------------------------------------

PROMOTION_STRIDE: Final = 8
"""A synchronous batch promotes its frontier once this many children past it are done: one
promotion transaction per stride of children instead of one per child."""


@dataclass(frozen=True)
class Family:
    """One protocol family as the supervisor drives it."""

    name: Literal["sync_batch", "async_bulk_job"]
    checks: Literal["submit_response", "poll_response"]
    """Where verification reads the counters: the submit answer, or the job's status."""
    observes: bool
    """A submit answer is a durable receipt, observed by read-only polls until the job ends."""
    stride: int
    """Children done past the frontier before it is promoted."""
    width: int = 1
    """Children in flight at once: one remote job at a time for a bulk job (V1)."""


_FAMILIES: Final[Mapping[str, Family]] = {
    "sync_batch": Family("sync_batch", checks="submit_response", observes=False,
                         stride=PROMOTION_STRIDE),
    "async_bulk_job": Family("async_bulk_job", checks="poll_response", observes=True, stride=1),
}


def family_of(profile: OperationProfile) -> Family:
    """The family ``profile`` declares, with its certified width; ``profile.unsupported_family``
    when the supervisor cannot drive it (an unknown family, counters read from the other
    answer, a bulk job without a receipt poll)."""
    family = _FAMILIES.get(profile.protocol_family)
    if family is None or family.checks != profile.verification.counters_from:
        raise DponeError(code="profile.unsupported_family",
                         message=f"profile {profile.ref}: protocol family "
                         f"{profile.protocol_family!r} with counters from "
                         f"{profile.verification.counters_from!r} is not supported")
    if family.observes:
        if profile.acknowledgement.poll is None:
            raise DponeError(code="profile.unsupported_family",
                             message=f"profile {profile.ref} declares no receipt poll")
        return family
    # Every attempt holds one of the effect domain's remote-job slots and one active request.
    rate = profile.rate
    return dataclasses.replace(family, width=min(
        profile.max_in_flight_children, rate.max_active_requests, rate.max_active_remote_jobs))


def check_profile(plan: RestDeliveryPlan) -> None:
    """Refuse, before any freeze, seal or HTTP, a profile this supervisor cannot drive."""
    family_of(plan.profile.snapshot)


SUBMIT_STOPS: Final[Mapping[ResponseOutcome, str | None]] = {
    "sync_success": None,
    "async_receipt_accepted": None,
    "duplicate_receipt_same_intent": None,
    "accepted_without_receipt": UNKNOWN,
    "bare_duplicate": "REST_DELIVERY_UNSAFE_RETRY",
    "response_not_recognized": "REST_DELIVERY_PROTOCOL_UNKNOWN",
    "rejected_before_effect": "credential.rejected",
}
"""A recorded submit answer -> the code the run stops with (None: the delivery goes on)."""
POLL_STOPS: Final[Mapping[PollOutcome, str | None]] = {
    "running": None,
    "succeeded": None,
    "failed": None,
    "cancelled": None,
    "receipt_expired": "REST_DELIVERY_RECEIPT_EXPIRED",
    "protocol_unknown": "REST_DELIVERY_PROTOCOL_UNKNOWN",
}
"""A recorded poll outcome -> the code the run stops with (None: observation or verification
goes on)."""


def key_bound(plan: RestDeliveryPlan) -> bool:
    """The plan's fence binds the receiver's key to the payload and is certified here."""
    fence = plan.profile.snapshot.mutation_fence
    return (fence_certified(plan) and fence is not None
            and fence.key_payload_binding == "required")


# --- what an answer is -------------------------------------------------------------------------

def _values(extractors: Mapping[str, Extractor], response: Response,
            profile: OperationProfile) -> dict[str, str | int] | None:
    try:
        return extract(extractors, response, profile.observability.response_bounds)
    except ExtractionError:
        return None


def classify(profile: OperationProfile, sealed: SealedChild,
             response: Response, *, key_bound: bool = False
             ) -> tuple[ResponseOutcome | Literal["throttled"], dict[str, str | int]]:
    """The response outcome and the bounded receipt values to record.

    A duplicate answer naming a job is that job's same-key receipt when what it echoes (the
    payload filename, the keys) matches this child, or, when it echoes nothing to compare,
    when ``key_bound``: the profile's fence binds the key to the payload and is certified in
    this environment, so a job under this key is this payload's. Otherwise it is a bare
    duplicate whose job id is kept (``duplicate_job_id``) for the operator's reconcile."""
    ack = profile.acknowledgement
    observes = family_of(profile).observes
    status: dict[str, str | int] = {"http_status": response.status}
    if response.status in ack.accepted_statuses:
        if not observes:
            extractors = dict(ack.receipt)
            extractors["accepted_rows"] = profile.verification.accepted_rows
            if profile.verification.rejected_rows is not None:
                extractors["rejected_rows"] = profile.verification.rejected_rows
            values = _values(extractors, response, profile)
            if values is None or "accepted_rows" not in values:
                return "response_not_recognized", status
            return "sync_success", {**status, **values}
        values = _values(ack.receipt, response, profile)
        if not values:
            return "accepted_without_receipt", status
        return "async_receipt_accepted", {**status, **values}
    if ack.duplicate is not None and response.status in ack.duplicate.statuses:
        if not observes:
            return "bare_duplicate", status  # only a job receipt can be observed afterwards
        same_key = ack.duplicate.same_key_receipt
        values = _values(same_key, response, profile) or (  # an answer without the echoes
            _values({"id": same_key["id"]}, response, profile) if "id" in same_key else None
        ) or {}
        proofs = {"filename": sealed.request.filename,
                  "delivery_key": sealed.identities.delivery_key,
                  "receiver_mutation_key": sealed.identities.receiver_mutation_key}
        shown = {name: values[name] for name in proofs if name in values}
        echoed = bool(shown) and all(value == proofs[name] for name, value in shown.items())
        if values.get("id") is not None and (echoed or (key_bound and not shown)):
            return "duplicate_receipt_same_intent", {**status, **values}
        found = {"duplicate_job_id": values["id"]} if values.get("id") is not None else {}
        return "bare_duplicate", {**status, **found}
    if response.status in SUBMIT_THROTTLE_STATUSES:
        return "throttled", status
    if response.status in ack.rejected_before_effect_statuses:
        return "rejected_before_effect", status
    return "response_not_recognized", status


# --- the next submit move ----------------------------------------------------------------------

@dataclass(frozen=True)
class Record:
    """Record the receiver's answer ``kind`` with ``values``; the run stops with ``code`` (the
    send gate shut before the record) unless it is None. ``verified``: a synchronous answer
    whose counters account for every row, verified in the same transaction."""

    kind: ResponseOutcome
    values: dict[str, str | int]
    code: str | None
    verified: bool = False


@dataclass(frozen=True)
class RetryLater:
    """The request provably never started (``failure``): RETRY_WAIT, the next attempt after
    ``delay``; with ``delay`` None the submit budget is spent and the child waits for the next
    run."""

    delay: float | None
    failure: Failure


@dataclass(frozen=True)
class Replay:
    """Send the same key again after ``delay``: the fence is certified and budget remains.
    ``reason`` is the failed exchange (a transport failure or an HTTP status)."""

    delay: float
    reason: Failure | int


@dataclass(frozen=True)
class Stop:
    """Take ``step`` with ``receipt`` and stop with ``code``; ``shut_first``: the effect is
    unknown from here on, so the send gate shuts before the step is recorded."""

    step: Step
    code: str
    receipt: dict[str, str | int] | None
    failure: Failure | None
    extra: dict[str, str | int] | None = None
    shut_first: bool = False


SubmitMove = Record | RetryLater | Replay | Stop


@dataclass(frozen=True)
class Exchange:
    """Where one submit exchange happened: the child's in-flight state, its attempt, the time
    spent of the submit budget, the worker's wall clock and the jitter source."""

    state: S
    attempt: int
    elapsed_s: float
    now: dt.datetime
    rng: random.Random


def retry_delay(backoff: Backoff, attempt: int, elapsed_s: float, retry_after: float | None,
                rng: random.Random) -> float | BudgetExceeded | None:
    """The next delay inside the submit budget; None once attempts or time are spent."""
    remaining = backoff.budget_s - elapsed_s
    if attempt >= backoff.max_attempts:
        return None
    if retry_after is None and remaining <= 0:
        return None
    with contextlib.suppress(ValueError):
        return next_delay(attempt - 1, backoff, retry_after, max(remaining, 0.0), rng)
    return None


def submit_move(plan: RestDeliveryPlan, sealed: SealedChild, outcome: Response | Failure,
                exchange: Exchange) -> SubmitMove:
    """What the submit does after ``outcome``, the answer or failure of one exchange."""
    if isinstance(outcome, Response):
        kind, values = classify(plan.profile.snapshot, sealed, outcome, key_bound=key_bound(plan))
        if kind == "rejected_before_effect" and exchange.state == S.SUBMITTING_FENCED_REPLAY:
            kind = "response_not_recognized"  # proves nothing of the earlier attempt
        if kind != "throttled":
            return Record(kind, values, SUBMIT_STOPS[kind], verified=kind == "sync_success"
                          and proves_full(plan.profile.snapshot, values, sealed))
        retry_after = retry_after_seconds(outcome.headers, exchange.now)
        if retry_after is not None:
            values["retry_after_s"] = int(retry_after)
        return _replay_or_stop(plan, exchange, retry_after, None, values)
    if outcome.phase is TransportPhase.NOT_STARTED and exchange.state == S.SUBMITTING:
        delay = retry_delay(plan.profile.snapshot.retry.submit, exchange.attempt,
                            exchange.elapsed_s, None, exchange.rng)
        return RetryLater(delay if isinstance(delay, float) else None, outcome)
    return _replay_or_stop(plan, exchange, None, outcome, {})


def _replay_or_stop(plan: RestDeliveryPlan, exchange: Exchange, retry_after: float | None,
                    failure: Failure | None, values: dict[str, str | int]) -> Replay | Stop:
    """A certified same-key replay when budget remains and the certified key retention covers
    the attempt's age; else the stop to record."""
    retention = plan.fence.certified_retention_s
    certified = fence_certified(plan) and (retention is None or exchange.elapsed_s <= retention)
    delay = retry_delay(plan.profile.snapshot.retry.submit, exchange.attempt, exchange.elapsed_s,
                        retry_after, exchange.rng) if certified else None
    if isinstance(delay, float):
        return Replay(delay, failure or int(values["http_status"]))
    receipt = {**values, **(failure_facts(failure) if failure is not None else {})} or None
    if isinstance(delay, BudgetExceeded):
        return Stop(THROTTLED_BEYOND_BUDGET[exchange.state],
                    "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET", receipt, failure,
                    extra={"remaining_budget_s": int(delay.remaining_budget_s)})
    # No certified fence permits a same-key replay here (none, or its budget is spent).
    step = (REPLAY_BUDGET_EXHAUSTED if exchange.state == S.SUBMITTING_FENCED_REPLAY
            else MAY_HAVE_REACHED_UNFENCED)
    return Stop(step, UNKNOWN, receipt, failure,
                shut_first=failure is not None and not certified)


# --- observation and verification --------------------------------------------------------------

Acknowledgement = Literal["succeeded", "failed", "cancelled", "expired"]
Verdict = Literal["applied", "not_applied", "partially_applied", "unknown"]


def counter_verdict(acknowledgement: Acknowledgement, sealed_rows: int, accepted: object,
                    rejected: object, *, rejected_declared: bool) -> Verdict:
    """The effect the counters ``accepted`` / ``rejected`` (as the receiver reported them:
    ints, or anything else when missing or mistyped) prove for a child of ``sealed_rows``, by
    the spec's result table:

    ============================================  ===================================================
    counters (against the child's sealed rows)    verdict
    ============================================  ===================================================
    accepted or (declared) rejected missing        unknown: nothing is provable
    accepted == sealed, rejected == 0              applied (FULLY_APPLIED), whatever the ack
    ack failed/cancelled/expired, rejected         not_applied: the job did not succeed and counted no
    counted, accepted == 0                         accepted row
    accepted + rejected == sealed, accepted <      partially_applied: a per-record rejection, even of
    sealed                                         every row after a success acknowledgement (a
                                                   success never proves the absence of an effect, and
                                                   no receiver proves an atomic rollback in V1)
    anything else (unprocessed rows, counters      unknown: contradictory or incomplete counters
    above the sealed rows)
    ============================================  ===================================================

    A profile that declares no rejected counter counts every row it does not accept as unknown:
    its rejected count is 0."""
    rejected = rejected if rejected_declared else 0
    if not isinstance(accepted, int) or not isinstance(rejected, int):
        return "unknown"
    if accepted < 0 or rejected < 0 or accepted + rejected > sealed_rows:
        return "unknown"
    if accepted == sealed_rows and rejected == 0:
        return "applied"
    if (acknowledgement != "succeeded" and rejected_declared and accepted == 0
            and sealed_rows > 0):
        return "not_applied"
    if accepted + rejected == sealed_rows:
        return "partially_applied"
    return "unknown"



def poll_delay(backoff: Backoff, failures: int, outcome: Response | Failure, now: dt.datetime,
               rng: random.Random) -> float:
    """The pause after ``failures`` failed polls: full jitter, never earlier than a Retry-After
    the receiver sent."""
    delay = full_jitter_delay(failures - 1, float(backoff.initial_delay_s),
                              float(backoff.max_delay_s), rng)
    if isinstance(outcome, Response):
        floor = retry_after_seconds(outcome.headers, now)
        if floor is not None:
            delay = max(delay, floor)
    return delay


def counters(profile: OperationProfile,
             receipt: Mapping[str, object]) -> tuple[int | None, int | None]:
    """The accepted and rejected rows a receipt records (rejected is 0 when the profile declares
    no such counter); both None when either is missing or mistyped: nothing is provable."""
    accepted = receipt.get("accepted_rows")
    rejected = receipt.get("rejected_rows") if profile.verification.rejected_rows is not None \
        else 0
    if not isinstance(accepted, int) or not isinstance(rejected, int):
        return None, None
    return accepted, rejected


def proves_full(profile: OperationProfile, receipt: Mapping[str, object],
                sealed: SealedChild) -> bool:
    """True when ``receipt``'s counters account for every sealed row as accepted (the
    verdict's ``applied``)."""
    return counter_verdict("succeeded", sealed.descriptor.row_count,
                           receipt.get("accepted_rows"), receipt.get("rejected_rows"),
                           rejected_declared=profile.verification.rejected_rows
                           is not None) == "applied"


def verification(state: S, verdict: Verdict) -> tuple[Step, str | None]:
    """The step a VERIFYING child in ``state`` takes for ``verdict``, and the code the run
    stops with (None: verified in full)."""
    if verdict == "applied":
        return VERIFIED_FULL[state], None
    no_effect = NO_EFFECT.get(state)  # none after a success acknowledgement
    if verdict == "not_applied" and no_effect is not None:
        return no_effect, "receiver.terminal_failure"
    if verdict == "partially_applied":
        return VERIFIED_PARTIAL[state], "REST_DELIVERY_PARTIALLY_APPLIED"
    return NOT_PROVABLE[state], "REST_DELIVERY_COUNT_MISMATCH"
