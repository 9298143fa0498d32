"""Read-only receipt observation (``poll_receipt``) and verification of the receiver's counters.

Polling runs under an observation lease taken per poll and never sends a mutation: a running
job is observed again after the profile's poll interval (an unchanged running answer is recorded
only every ``RECORD_EVERY`` th poll, :mod:`._quiet`), a terminal job moves to VERIFYING with
its counters, an expired receipt (404/410) finalizes the effect as UNKNOWN and never authorizes a
resubmit, and an external cancellation is observed, never invoked. A poll that fails in
transport is repeated within the observation budget and records nothing. A child whose receipt
was already observed ``observability.max_observations`` times (its ``observation_ordinal``,
counted by the journal across runs, plus this observer's unrecorded polls) is not polled again:
``observation.limit_reached``.

When the profile certifies a key echo (``acknowledgement.poll.key_echo``), every 200 answer must
echo this child's receiver mutation key as the sealed request carried it: an answer without it
or with another value (a reused receipt id naming another job) is protocol-unknown, the effect
UNKNOWN, and none of its phase or counters are recorded as this child's.

Each recorded observation keeps, under ``evidence_scalars``, only the top-level members of a
JSON answer about the job that ``observability.evidence_scalars`` lists (the spec: "only
allowlisted bounded response scalars are embedded") and that hold a string or an integer, read
within the response bounds; an answer about another key's job keeps none.

Verification compares the receiver's counters with the sealed row count: only all rows
accounted with none rejected is FULLY_APPLIED and checkpoint-eligible.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Final, cast

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, Lease
from dpone.contracts.profile import ResponseBounds
from dpone.contracts.sealed import SealedChild
from dpone.contracts.state import StateName
from dpone.executor.supervisor._actions import OBSERVING_STATES
from dpone.executor.supervisor._context import Run, scalars
from dpone.executor.supervisor._decide import (
    POLL_STOPS,
    Acknowledgement,
    counter_verdict,
    counters,
    poll_delay,
    verification,
)
from dpone.executor.supervisor._job_status import classify_status
from dpone.executor.supervisor._quiet import QuietPolls, records_poll
from dpone.executor.supervisor._rate import take_poll_turn
from dpone.executor.supervisor._request import poll_request
from dpone.executor.supervisor._results import DeliveryBlocked
from dpone.executor.supervisor._transitions import POLL
from dpone.executor.transport import ExtractionError, Failure, Response, parse_bounded_json

OBSERVATION_LIMIT: Final = "observation.limit_reached"
"""The stop of a receipt observed ``observability.max_observations`` times without an end."""


def observe(run: Run, operation: ChildOperation, sealed: SealedChild, *, wait: bool,
            once: bool = False, quiet: QuietPolls | None = None) -> ChildOperation | DeliveryBlocked:
    """Poll an ACCEPTED/WAITING child until it leaves observation.

    Returns it still observing when ``wait`` is off and the next check is not due, or when this
    run has observed for the profile's ``operation_total_s``: the receipt stays durable and the
    next run continues. Each poll holds an observation lease from the GET to its record (or to
    the decision not to record it). ``once`` returns after the first answer about the job (a
    trigger's one observation step). ``quiet``: the observer's unrecorded polls, kept across
    calls by a caller that polls one step at a time.
    """
    quiet = quiet if quiet is not None else QuietPolls()
    profile = run.plan.profile.snapshot
    poll = profile.acknowledgement.poll  # a family that observes declares one (family_of)
    expired = poll.expired_statuses if poll is not None else ()
    backoff = profile.retry.observation
    deadline = run.clock.monotonic() + profile.timeouts.operation_total_s
    failures = 0
    while operation.state_name in OBSERVING_STATES:
        if quiet.counted(operation.observation_ordinal) >= profile.observability.max_observations:
            return observation_limit(run, operation, quiet)
        pause = run.due_in(quiet.next_due(operation.next_check_after))
        if (pause > 0 and not wait) or run.clock.monotonic() > deadline:
            return operation
        run.pause(pause)
        if not take_poll_turn(run, deadline):  # the account's shared poll rate
            return operation
        with run.writer.lease(operation.operation_id, "observation") as lease:
            started = run.clock.monotonic()
            response = run.transport.send(poll_request(run.plan, operation.receipt or {}))
            run.telemetry.exchanged("poll_receipt", response, run.clock.monotonic() - started)
            answered = isinstance(response, Response) and (
                response.status == 200 or response.status in expired)
            if isinstance(response, Response) and answered:
                operation, code = _record_poll(run, operation, sealed, lease, response, quiet)
                if code is not None:
                    return run.blocked(operation, code)
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
        run.back_off(operation, "poll_receipt", response, failures,
                     poll_delay(backoff, failures, response, run.clock.now(), run.rng))
    return operation


def observation_limit(run: Run, operation: ChildOperation, quiet: QuietPolls) -> DeliveryBlocked:
    """The stop of a child whose receipt was polled ``observability.max_observations`` times
    (the journal's ``observation_ordinal``, across every run, and ``quiet``'s unrecorded polls)
    without a terminal answer: no further poll is sent, the effect stays as the journal holds
    it."""
    limit = run.plan.profile.snapshot.observability.max_observations
    return run.blocked(operation, OBSERVATION_LIMIT,
                       extra={"observations": quiet.counted(operation.observation_ordinal),
                              "max_observations": limit})


def _poll_failure(outcome: Response | Failure) -> dict[str, str | int]:
    if isinstance(outcome, Response):
        return {"http_status": outcome.status}
    return {"transport_phase": outcome.phase.value, "transport_failure": outcome.kind.value}


def _record_poll(run: Run, operation: ChildOperation, sealed: SealedChild, lease: Lease,
                 response: Response, quiet: QuietPolls) -> tuple[ChildOperation, str | None]:
    profile = run.plan.profile.snapshot
    status = classify_status(run.plan, operation, sealed, response)
    outcome, values = status.outcome, status.values
    # An answer about another job: none of its phase or counters is recorded as this child's.
    reason = {"reason": "key_echo_mismatch"} if status.about_another_key else {}
    code = POLL_STOPS[outcome]
    due = None
    if outcome == "running":
        due = run.now() + dt.timedelta(seconds=profile.timeouts.poll_interval_s)
    receipt = {**(operation.receipt or {}), **values}
    kept = {} if status.about_another_key else evidence_scalars(
        profile.observability.evidence_scalars, response, profile.observability.response_bounds)
    listed = {"evidence_scalars": kept} if kept else {}
    observation = {**values, "outcome": outcome, **reason, **listed}
    state = StateName(operation.state_name)
    remaining = profile.observability.max_observations - quiet.counted(
        operation.observation_ordinal)
    if due is not None and not records_poll(state, outcome, observation, quiet,
                                            remaining=remaining):
        quiet.skip(due)  # an unchanged running job: no revision, counted for the next record
        return operation, None
    polls = quiet.recorded(observation)
    updated = run.writer.step(operation, lease, *POLL[state, outcome], receipt=receipt,
                             next_check_after=due, error_code=code,
                             observation={**observation, **({"polls": polls} if polls > 1
                                                            else {})},
                             observation_polls=polls)
    return updated, code


def verify(run: Run, operation: ChildOperation,
           sealed: SealedChild) -> ChildOperation | DeliveryBlocked:
    """Derive the remote effect of a VERIFYING child from the counters it recorded."""
    profile = run.plan.profile.snapshot
    acknowledged = operation.state_name.removeprefix("verifying_")
    receipt = operation.receipt or {}
    expected = sealed.descriptor.row_count
    verdict = counter_verdict(cast(Acknowledgement, acknowledged), expected,
                              receipt.get("accepted_rows"), receipt.get("rejected_rows"),
                              rejected_declared=profile.verification.rejected_rows is not None)
    step, code = verification(StateName(operation.state_name), verdict)
    # The observation lease is held for the verification's own transaction: nothing between
    # the counters read here and their record is I/O.
    lease = run.writer.claim(operation.operation_id, "observation")
    if code is None:
        return run.writer.step(operation, lease, *step)
    extra: dict[str, str | int] = {}
    evidence: str | None = None
    if code == "REST_DELIVERY_PARTIALLY_APPLIED":
        accepted, rejected = counters(profile, receipt)
        # Published before the transition that names its digest: durable before that commit.
        evidence = run.publish_evidence(operation, "result", {
            "operation_id": operation.operation_id, "acknowledgement": acknowledged,
            "expected_rows": expected, "accepted_rows": accepted, "rejected_rows": rejected})
        extra = {"expected_rows": expected}
    elif code == "REST_DELIVERY_COUNT_MISMATCH":
        extra = {"expected_rows": expected, **scalars(receipt)}
    operation = run.writer.step(operation, lease, *step, error_code=code,
                               evidence_digest=evidence)
    return run.blocked(operation, code, extra=extra or None)


def evidence_scalars(names: Sequence[str], response: Response,
                     bounds: ResponseBounds) -> dict[str, str | int]:
    """The allowlisted string and integer members of ``response``'s JSON object body."""
    if not names or response.headers.get("content-encoding", "identity").strip().lower() not in (
            "", "identity"):
        return {}
    try:
        document = parse_bounded_json(response.body, bounds)
    except ExtractionError:
        return {}
    if not isinstance(document, dict):
        return {}
    kept: dict[str, str | int] = {}
    for name in names:
        value = document.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool):
            kept[name] = value
    return kept
