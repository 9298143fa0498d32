"""Read-only receipt observation (``poll_receipt``) and verification of the receiver's counters.

Polling runs under an observation lease taken per poll and never sends a mutation: a running
job is observed again after the profile's poll interval, a terminal job moves to VERIFYING with
its counters, an expired receipt (404/410) finalizes the effect as UNKNOWN and never authorizes a
resubmit, and an external cancellation is observed, never invoked. A poll that fails in
transport is repeated within the observation budget and records nothing. A child whose receipt
was already observed ``observability.max_observations`` times (its ``observation_ordinal``,
counted by the journal across runs) is not polled again: ``observation.limit_reached``. Each
recorded observation keeps only the response scalars ``observability.evidence_scalars`` lists
(``_evidence``).

When the profile certifies a key echo (``acknowledgement.poll.key_echo``), every 200 answer must
echo this child's receiver mutation key as the sealed request carried it: an answer without it
or with another value (a reused receipt id naming another job) is protocol-unknown, the effect
UNKNOWN, and none of its phase or counters are recorded as this child's.

Verification compares the receiver's counters with the sealed row count: only all rows
accounted with none rejected is FULLY_APPLIED and checkpoint-eligible.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Final

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, Lease
from dpone.contracts.profile import Poll
from dpone.contracts.sealed import SealedChild
from dpone.executor.supervisor._actions import OBSERVING_STATES
from dpone.executor.supervisor._context import RunContext, scalars
from dpone.executor.supervisor._evidence import evidence_scalars
from dpone.executor.supervisor._job_status import classify_status
from dpone.executor.supervisor._rate import take_poll_turn
from dpone.executor.supervisor._request import poll_request
from dpone.executor.supervisor._results import DeliveryBlocked
from dpone.executor.supervisor._transitions import (
    NO_EFFECT,
    NOT_PROVABLE,
    POLL,
    VERIFIED_FULL,
    VERIFIED_PARTIAL,
    PollOutcome,
    state_of,
)
from dpone.executor.transport import (
    Failure,
    Response,
    full_jitter_delay,
    retry_after_seconds,
)
from dpone.executor.verdict import Acknowledgement, counter_verdict

OBSERVATION_LIMIT: Final = "observation.limit_reached"
"""The stop of a receipt observed ``observability.max_observations`` times without an end."""

# A recorded poll outcome -> the code the run stops with (None: observation or verification
# goes on).
_ACKNOWLEDGEMENTS: Final[Mapping[str, Acknowledgement]] = {
    "succeeded": "succeeded", "failed": "failed", "cancelled": "cancelled", "expired": "expired"}
"""A VERIFYING state's acknowledgement (its name after ``verifying_``), as the verdict takes it."""
_STOP_CODES: Final[Mapping[PollOutcome, str | None]] = {
    "running": None,
    "succeeded": None,
    "failed": None,
    "cancelled": None,
    "receipt_expired": "REST_DELIVERY_RECEIPT_EXPIRED",
    "protocol_unknown": "REST_DELIVERY_PROTOCOL_UNKNOWN",
}


def observe(ctx: RunContext, operation: ChildOperation, sealed: SealedChild, *,
            wait: bool, once: bool = False) -> ChildOperation | DeliveryBlocked:
    """Poll an ACCEPTED/WAITING child until it leaves observation.

    Returns it still observing when ``wait`` is off and the next check is not due, or when this
    run has observed for the profile's ``operation_total_s``: the receipt stays durable and the
    next run continues. Each poll holds an observation lease from the GET to its record.
    ``once`` returns after the first recorded answer (a trigger's one observation step).
    """
    profile = ctx.plan.profile.snapshot
    poll = profile.acknowledgement.poll
    if poll is None:
        raise DponeError(code="profile.unsupported_family",
                         message=f"profile {profile.ref} declares no receipt poll")
    backoff = profile.retry.observation
    deadline = ctx.clock.monotonic() + profile.timeouts.operation_total_s
    failures = 0
    while operation.state_name in OBSERVING_STATES:
        if operation.observation_ordinal >= profile.observability.max_observations:
            return observation_limit(ctx, operation)
        pause = ctx.due_in(operation.next_check_after)
        if (pause > 0 and not wait) or ctx.clock.monotonic() > deadline:
            return operation
        ctx.pause(pause)
        if not take_poll_turn(ctx, deadline):  # the account's shared poll rate
            return operation
        with ctx.lease(operation.operation_id, "observation") as lease:
            response = ctx.transport.send(poll_request(ctx.plan, operation.receipt or {}))
            answered = isinstance(response, Response) and (
                response.status == 200 or response.status in poll.expired_statuses)
            if isinstance(response, Response) and answered:
                operation, code = _record_poll(ctx, poll, operation, sealed, lease, response)
                if code is not None:
                    return ctx.blocked(operation, code)
                if once:
                    return operation
                failures = 0
                continue
        # Not an answer about the job (transport failure, throttle, 5xx, auth): read-only, so it
        # is repeated within the observation budget; nothing is recorded.
        failures += 1
        if failures >= backoff.max_attempts:
            raise DponeError(code="receiver.unavailable", operation_id=operation.operation_id,
                             message=f"{failures} receipt poll(s) got no answer about the job; "
                             "the receipt is kept and observation resumes on the next run",
                             details=_poll_failure(response))
        ctx.back_off(operation, "poll_receipt", response, failures, _poll_delay(ctx, failures, response))
    return operation


def observation_limit(ctx: RunContext, operation: ChildOperation) -> DeliveryBlocked:
    """The stop of a child whose receipt was polled ``observability.max_observations`` times
    (the journal's ``observation_ordinal``, across every run) without a terminal answer: no
    further poll is sent, nothing is recorded, the effect stays as the journal holds it."""
    limit = ctx.plan.profile.snapshot.observability.max_observations
    return ctx.blocked(operation, OBSERVATION_LIMIT,
                       extra={"observations": operation.observation_ordinal,
                              "max_observations": limit})


def _poll_failure(outcome: Response | Failure) -> dict[str, str | int]:
    if isinstance(outcome, Response):
        return {"http_status": outcome.status}
    return {"transport_phase": outcome.phase.value, "transport_failure": outcome.kind.value}


def _poll_delay(ctx: RunContext, failures: int, outcome: Response | Failure) -> float:
    """Full jitter, never earlier than a Retry-After the receiver sent."""
    backoff = ctx.plan.profile.snapshot.retry.observation
    delay = full_jitter_delay(failures - 1, float(backoff.initial_delay_s),
                              float(backoff.max_delay_s), ctx.rng)
    if isinstance(outcome, Response):
        floor = retry_after_seconds(outcome.headers, ctx.clock.now())
        if floor is not None:
            delay = max(delay, floor)
    return delay


def _record_poll(ctx: RunContext, poll: Poll, operation: ChildOperation, sealed: SealedChild,
                 lease: Lease, response: Response) -> tuple[ChildOperation, str | None]:
    profile = ctx.plan.profile.snapshot
    status = classify_status(ctx.plan, operation, sealed, response)
    outcome, values = status.outcome, status.values
    # An answer about another job: none of its phase or counters is recorded as this child's.
    reason = {"reason": "key_echo_mismatch"} if status.about_another_key else {}
    code = _STOP_CODES[outcome]
    due = None
    if outcome == "running":
        due = ctx.now() + dt.timedelta(seconds=profile.timeouts.poll_interval_s)
    receipt = {**(operation.receipt or {}), **values}
    kept = {} if status.about_another_key else evidence_scalars(
        profile.observability.evidence_scalars, response, profile.observability.response_bounds)
    listed = {"evidence_scalars": kept} if kept else {}
    updated = ctx.step(operation, lease, *POLL[state_of(operation), outcome], receipt=receipt,
                       next_check_after=due, error_code=code,
                       observation={**values, "outcome": outcome, **reason, **listed})
    return updated, code


def _counters(ctx: RunContext, receipt: Mapping[str, object]) -> tuple[int | None, int | None]:
    """The accepted and rejected rows a receipt records (rejected is 0 when the profile declares
    no such counter); both None when either is missing or mistyped: nothing is provable."""
    accepted = receipt.get("accepted_rows")
    declared = ctx.plan.profile.snapshot.verification.rejected_rows is not None
    rejected = receipt.get("rejected_rows") if declared else 0
    if not isinstance(accepted, int) or not isinstance(rejected, int):
        return None, None
    return accepted, rejected


def proves_full(ctx: RunContext, receipt: Mapping[str, object], sealed: SealedChild) -> bool:
    """True when ``receipt``'s counters account for every sealed row as accepted."""
    return _counters(ctx, receipt) == (sealed.descriptor.row_count, 0)


def verify(ctx: RunContext, operation: ChildOperation,
           sealed: SealedChild) -> ChildOperation | DeliveryBlocked:
    """Derive the remote effect of a VERIFYING child from the counters it recorded."""
    state = state_of(operation)
    acknowledged = operation.state_name.removeprefix("verifying_")
    receipt = operation.receipt or {}
    expected = sealed.descriptor.row_count
    declared = ctx.plan.profile.snapshot.verification.rejected_rows is not None
    no_effect = NO_EFFECT.get(state)  # none after a success acknowledgement
    # The observation lease is held for the verification's own transaction: nothing between
    # the counters read here and their record is I/O.
    lease = ctx.claim(operation.operation_id, "observation")
    accepted, rejected = _counters(ctx, receipt)
    verdict = counter_verdict(_ACKNOWLEDGEMENTS[acknowledged], expected,
                              receipt.get("accepted_rows"),
                              receipt.get("rejected_rows"), rejected_declared=declared)
    if verdict == "applied":
        return ctx.step(operation, lease, *VERIFIED_FULL[state])
    if verdict == "not_applied" and no_effect is not None:
        operation = ctx.step(operation, lease, *no_effect,
                             error_code="receiver.terminal_failure")
        return ctx.blocked(operation, "receiver.terminal_failure")
    if verdict == "partially_applied":
        # Published before the transition that names its digest: durable before that commit.
        digest = ctx.publish_evidence(operation, "result", {
            "operation_id": operation.operation_id, "acknowledgement": acknowledged,
            "expected_rows": expected, "accepted_rows": accepted, "rejected_rows": rejected})
        operation = ctx.step(operation, lease, *VERIFIED_PARTIAL[state],
                             evidence_digest=digest, error_code="REST_DELIVERY_PARTIALLY_APPLIED")
        return ctx.blocked(operation, "REST_DELIVERY_PARTIALLY_APPLIED",
                           extra={"expected_rows": expected})
    operation = ctx.step(operation, lease, *NOT_PROVABLE[state],
                         error_code="REST_DELIVERY_COUNT_MISMATCH")
    return ctx.blocked(operation, "REST_DELIVERY_COUNT_MISMATCH",
                       extra={"expected_rows": expected, **scalars(receipt)})
