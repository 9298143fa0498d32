"""Submitting one child: the MAY_ATTEMPT marker, the critical SUBMITTING transaction, one send.

Before each send the attempt's marker is published create-if-absent and the journal commits
SUBMITTING. Then exactly one of:

* the receiver answered: the response is classified by the profile (sync counters, async
  receipt, duplicate with a same-key receipt, bare duplicate, throttle, a status the profile
  certifies as refused before any effect, unrecognized) and recorded in one guarded transition;
* the request provably never started: RETRY_WAIT with a full-jitter delay inside the budget;
  a transport that cannot send for want of its environment (``credential.unavailable``: no
  request byte left) leaves the child in RETRY_WAIT too and the run stops with that code;
* it may have reached the receiver: a same-key replay only when the plan's receiver fence is
  certified here and budget remains, else the effect is UNKNOWN and nothing is resent.

A throttle answer (408, 425, 429, 5xx) is a replay candidate only under a certified fence, and
its Retry-After is a lower bound: a server delay beyond the remaining budget stops with
``REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET`` instead of retrying early.

A certified refusal before effect (``acknowledgement.rejected_before_effect_statuses``, e.g. 401
and 403) stops the run with ``credential.rejected`` and leaves the child in RETRY_WAIT,
NONE_PROVEN: resending the same credential cannot succeed, and once it is fixed the next run
submits a new attempt with the same delivery key. During a same-key replay such an answer proves
nothing about the earlier attempt, so it stays ``REST_DELIVERY_PROTOCOL_UNKNOWN``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Mapping
from typing import Final, Literal

from dpone.contracts import ERROR_CATALOG, DponeError, ExitClass, canonical_json, content_digest
from dpone.contracts.journal import AttemptPlan, ChildOperation, Lease, SubmitLease
from dpone.contracts.profile import SUBMIT_THROTTLE_STATUSES, Extractor, OperationProfile
from dpone.contracts.sealed import SealedChild
from dpone.contracts.state import StateName
from dpone.contracts.transport import failure_facts
from dpone.executor.supervisor._actions import reconciled_absent
from dpone.executor.supervisor._context import RunContext
from dpone.executor.supervisor._gate import Withheld
from dpone.executor.supervisor._observe import proves_full
from dpone.executor.supervisor._rate import SubmitTurns
from dpone.executor.supervisor._request import check_payload, outbound_request
from dpone.executor.supervisor._results import DeliveryBlocked
from dpone.executor.supervisor._transitions import (
    FENCE_REFUSED,
    MAY_HAVE_REACHED_UNFENCED,
    NOT_STARTED_FINAL,
    NOT_STARTED_RETRY,
    REPLAY_BUDGET_EXHAUSTED,
    RESPONSE,
    SYNC_SUCCESS_LANDS_IN,
    THROTTLED_BEYOND_BUDGET,
    VERIFIED_FULL,
    ResponseOutcome,
    state_of,
)
from dpone.executor.transport import (
    BudgetExceeded,
    ExtractionError,
    Failure,
    OutboundRequest,
    Response,
    TransportPhase,
    extract,
    next_delay,
    retry_after_seconds,
)

ORPHAN_MARKER_STATES: Final = frozenset({StateName.SEALED, StateName.RETRY_WAIT})
"""Where an orphan marker at the next attempt's key is recorded (``*_orphan_marker_found``),
besides a child an operator reconciliation proved not applied (its resubmit)."""
PERMANENT_FENCE_REFUSALS: Final = frozenset({"REST_DELIVERY_STALE_GENERATION",
                                            "REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED"})

# A recorded submit answer -> the code the run stops with (None: the delivery goes on).
_STOP_CODES: Final[Mapping[ResponseOutcome, str | None]] = {
    "sync_success": None,
    "async_receipt_accepted": None,
    "duplicate_receipt_same_intent": None,
    "accepted_without_receipt": "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN",
    "bare_duplicate": "REST_DELIVERY_UNSAFE_RETRY",
    "response_not_recognized": "REST_DELIVERY_PROTOCOL_UNKNOWN",
    "rejected_before_effect": "credential.rejected",
}


def _key_bound(ctx: RunContext) -> bool:
    """The plan's fence binds the receiver's key to the payload and is certified here."""
    fence = ctx.plan.profile.snapshot.mutation_fence
    return ctx.fence_certified and fence is not None and fence.key_payload_binding == "required"


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
    status: dict[str, str | int] = {"http_status": response.status}
    if response.status in ack.accepted_statuses:
        if profile.protocol_family == "sync_batch":
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
        if profile.protocol_family != "async_bulk_job":
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


def submit(ctx: RunContext, operation: ChildOperation,
           sealed: SealedChild) -> ChildOperation | DeliveryBlocked | Withheld:
    """Take a SEALED or RETRY_WAIT child through SUBMITTING to its recorded submit outcome."""
    request = outbound_request(ctx.plan, sealed, ctx.artifacts,
                               check_payload(sealed, ctx.artifacts))
    started = ctx.clock.monotonic()
    replay = False
    # The mutation lease, and the first attempt planned in the same transaction when the child
    # is due now, with its submit turn; a later attempt (or one still waiting out its delay) is
    # planned in the loop and takes its turn there.
    begun, turns = _begin(ctx, operation, started)
    planned = begun.attempt
    with ctx.held(begun.lease) as lease, turns:
        while True:
            attempt, planned = planned, None
            if attempt is None:
                if operation.state_name == StateName.RETRY_WAIT:
                    ctx.wait_until(operation.next_check_after)
                attempt = ctx.journal.plan_attempt(operation.operation_id, lease)
            turns.take(operation, lease)  # the account's shared rate, before any marker
            try:
                marker = ctx.artifacts.put_bytes(attempt.marker_key,
                                                 canonical_json(attempt.marker))
            except DponeError as conflict:
                if conflict.code != "artifact.conflict" or not (
                        operation.state_name in ORPHAN_MARKER_STATES
                        or reconciled_absent(operation)):
                    raise
                return _orphan_marker(ctx, operation, lease, attempt)
            try:
                operation = ctx.journal.enter_submitting(attempt, marker.digest, lease,
                                                         operation.revision, fenced_replay=replay)
            except DponeError as refusal:
                if (refusal.code not in PERMANENT_FENCE_REFUSALS
                        or operation.state_name != StateName.SEALED):
                    raise
                # A higher generation or an applied append scope forbids this mutation for good.
                refused = ctx.step(operation, lease, *FENCE_REFUSED, error_code=refusal.code)
                return ctx.blocked(refused, refusal.code)
            ctx.notify(operation, "enter_submitting")
            outcome = _send(ctx, operation, lease, request, replay=replay)
            turns.answered(outcome)  # a back-off to send again holds no active-request slot
            if isinstance(outcome, Withheld):
                return outcome
            if isinstance(outcome, Response):
                kind, values = classify(ctx.plan.profile.snapshot, sealed, outcome,
                                        key_bound=_key_bound(ctx))
                if (kind == "rejected_before_effect"
                        and operation.state_name == StateName.SUBMITTING_FENCED_REPLAY):
                    kind = "response_not_recognized"  # proves nothing of the earlier attempt
                if kind != "throttled":
                    if _STOP_CODES[kind] is not None:
                        ctx.gate.shut(operation.operation_id)  # before the answer is recorded
                    return _record(ctx, operation, lease, kind, values, sealed)
                retry_after = retry_after_seconds(outcome.headers, ctx.clock.now())
                if retry_after is not None:
                    values["retry_after_s"] = int(retry_after)
                stop = _replay_or_stop(ctx, operation, lease, started, retry_after, None, values)
            elif (outcome.phase is TransportPhase.NOT_STARTED
                  and operation.state_name == StateName.SUBMITTING):
                operation, replay = _not_started(ctx, operation, lease, started, outcome), False
                continue
            else:
                if not ctx.fence_certified:
                    ctx.gate.shut(operation.operation_id)  # the effect is unknown from here on
                stop = _replay_or_stop(ctx, operation, lease, started, None, outcome, {})
            if isinstance(stop, DeliveryBlocked):
                return stop
            replay = True


def _begin(ctx: RunContext, operation: ChildOperation,
           started: float) -> tuple[SubmitLease, SubmitTurns]:
    """The mutation lease, the first attempt when due, and that attempt's submit turn: one
    journal transaction."""
    turns = SubmitTurns(ctx, started)
    begun = ctx.journal.begin_attempt(operation.operation_id, ctx.holder, ctx.leases.ttl_s,
                                      rate=turns.request(operation.operation_id))
    turns.begun(begun.turn)
    return begun, turns


def _send(ctx: RunContext, operation: ChildOperation, lease: Lease, request: OutboundRequest,
          *, replay: bool) -> Response | Failure | Withheld:
    """Hand the request to the transport unless the run's send gate has shut (then the attempt
    provably never started: RETRY_WAIT, due now). A transport refusal before any byte left is
    recorded and raised."""
    if not ctx.gate.admit(operation.operation_id, replay=replay):
        return Withheld(ctx.step(operation, lease, *NOT_STARTED_RETRY,
                                 next_check_after=ctx.now()))
    try:
        return ctx.transport.send(request)
    except DponeError as refusal:
        ctx.gate.shut(operation.operation_id)
        if operation.state_name == StateName.SUBMITTING:
            _refused_before_sending(ctx, operation, lease, refusal)
        refusal.operation_id = refusal.operation_id or operation.operation_id
        raise


def _orphan_marker(ctx: RunContext, operation: ChildOperation, lease: Lease,
                   attempt: AttemptPlan) -> DeliveryBlocked:
    """The next attempt's marker key holds another marker (of another journal epoch, or one a
    reconciliation did not cover): a request of that attempt may have reached the receiver, so
    nothing is sent; the child's effect is recorded UNKNOWN with the orphan's digest and the run
    stops for a reconciliation."""
    orphan = content_digest(ctx.artifacts.get_bytes(attempt.marker_key))
    updated = ctx.journal.record_orphan_marker(attempt, orphan, lease, operation.revision)
    ctx.notify(updated, "orphan_marker_found")
    return ctx.blocked(updated, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN",
                       extra={"orphan_marker_key": attempt.marker_key,
                              "orphan_marker_digest": orphan})


def _record(ctx: RunContext, operation: ChildOperation, lease: Lease, kind: ResponseOutcome,
            values: dict[str, str | int], sealed: SealedChild) -> ChildOperation | DeliveryBlocked:
    code = _STOP_CODES[kind]
    # The bounded response scalars are published before the journal write: a receipt survives
    # even when that write fails (lease lost, journal unavailable).
    evidence = ctx.publish_evidence(operation, "submit-response", {
        "operation_id": operation.operation_id, "attempt_ordinal": operation.attempt_ordinal,
        "outcome": kind, **values})
    due: dt.datetime | None = None
    if kind == "async_receipt_accepted":
        due = ctx.now() + dt.timedelta(seconds=ctx.plan.profile.snapshot.timeouts.poll_interval_s)
    elif kind == "duplicate_receipt_same_intent":
        due = ctx.now()
    receipt = values if code is None else {
        key: values[key] for key in ("http_status", "duplicate_job_id") if key in values}
    # A synchronous answer whose counters account for every row is verified in the same
    # transaction that records it (nothing between the two is I/O).
    verified = (VERIFIED_FULL[SYNC_SUCCESS_LANDS_IN]
                if kind == "sync_success" and proves_full(ctx, values, sealed) else None)
    updated = ctx.settle(operation, lease, *RESPONSE[state_of(operation), kind], verified=verified,
                         receipt=receipt, next_check_after=due, error_code=code,
                         evidence_digest=evidence)
    if code is None:
        return updated
    ref = ctx.plan.binding.snapshot.credential_ref
    extra = {"credential_ref": ref} if kind == "rejected_before_effect" and ref else None
    return ctx.blocked(updated, code, extra=extra)


def _refused_before_sending(ctx: RunContext, operation: ChildOperation, lease: Lease,
                            refusal: DponeError) -> None:
    """The transport raised before any request byte left: record why the attempt never started.

    A refusal for want of the environment (exit class 3, e.g. ``credential.unavailable``) leaves
    the child in RETRY_WAIT with no delay (it waits for the fix, not for a time): the next run,
    once the credential is there, submits a new attempt with the same delivery key. A malformed
    request (any other code) would be refused again, so the child ends ``final_not_started``.
    """
    if ERROR_CATALOG[refusal.code].exit_class is ExitClass.UNAVAILABLE:
        ctx.step(operation, lease, *NOT_STARTED_RETRY, error_code=refusal.code)
        return
    ctx.step(operation, lease, *NOT_STARTED_FINAL, error_code=refusal.code)


def _not_started(ctx: RunContext, operation: ChildOperation, lease: Lease, started: float,
                 failure: Failure) -> ChildOperation:
    """Proven not started: RETRY_WAIT after a full-jitter delay inside this run's budget.

    When the run's submit budget is spent the child still waits in RETRY_WAIT (nothing reached
    the receiver, so nothing is lost by waiting) and the run stops as ``receiver.unavailable``;
    the next run resumes the same delivery key with a new attempt.
    """
    delay = _delay(ctx, operation, started, None)
    due = ctx.now() + dt.timedelta(seconds=delay if isinstance(delay, float) else 0.0)
    waiting = ctx.step(operation, lease, *NOT_STARTED_RETRY, next_check_after=due)
    if not isinstance(delay, float):
        raise DponeError(code="receiver.unavailable", operation_id=operation.operation_id,
                         message=f"attempt {operation.attempt_ordinal} provably never reached the "
                         f"receiver ({failure.kind.value}: {failure.detail}); the child waits in "
                         "retry_wait and the next run resumes it",
                         details={"transport_phase": failure.phase.value,
                                  "transport_failure": failure.kind.value})
    ctx.retrying(waiting, "submit", failure, operation.attempt_ordinal, delay)
    return waiting


def _replay_or_stop(ctx: RunContext, operation: ChildOperation, lease: Lease, started: float,
                    retry_after: float | None, failure: Failure | None,
                    values: dict[str, str | int]) -> DeliveryBlocked | None:
    """Sleep and return None when a certified same-key replay may follow; else record the stop."""
    delay = _delay(ctx, operation, started, retry_after) if ctx.fence_certified else None
    if isinstance(delay, float):
        ctx.back_off(operation, "replay", failure or int(values["http_status"]),
                     operation.attempt_ordinal, delay)
        return None
    receipt = {**values, **(failure_facts(failure) if failure is not None else {})} or None
    if isinstance(delay, BudgetExceeded):
        code = "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET"
        updated = ctx.step(operation, lease, *THROTTLED_BEYOND_BUDGET[state_of(operation)],
                           receipt=receipt, error_code=code)
        return ctx.blocked(updated, code, failure,
                           extra={"remaining_budget_s": int(delay.remaining_budget_s)})
    code = "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    if operation.state_name == StateName.SUBMITTING_FENCED_REPLAY:
        updated = ctx.step(operation, lease, *REPLAY_BUDGET_EXHAUSTED, receipt=receipt,
                           error_code=code)
    else:
        # No certified fence permits a same-key replay here (none, or its budget is spent).
        updated = ctx.step(operation, lease, *MAY_HAVE_REACHED_UNFENCED, receipt=receipt,
                           error_code=code)
    return ctx.blocked(updated, code, failure)


def _delay(ctx: RunContext, operation: ChildOperation, started: float,
           retry_after: float | None) -> float | BudgetExceeded | None:
    """The next delay inside the submit budget; None once attempts or time are spent."""
    backoff = ctx.plan.profile.snapshot.retry.submit
    remaining = backoff.budget_s - (ctx.clock.monotonic() - started)
    if operation.attempt_ordinal >= backoff.max_attempts:
        return None
    if retry_after is None and remaining <= 0:
        return None
    with contextlib.suppress(ValueError):
        return next_delay(operation.attempt_ordinal - 1, backoff, retry_after,
                          max(remaining, 0.0), ctx.rng)
    return None
