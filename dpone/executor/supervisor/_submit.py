"""Submitting one child: the MAY_ATTEMPT marker, the critical SUBMITTING transaction, one send.

Before each send the attempt's marker is published create-if-absent and the journal commits
SUBMITTING; what the exchange then calls for is decided by :func:`~._decide.submit_move` and
carried out here: the classified answer recorded in one guarded transition; a request that
provably never started back in RETRY_WAIT within the budget (a transport refusal for want of
its environment, ``credential.unavailable``, stops the run there); one that may have reached
the receiver replayed with the same key only under a certified fence with budget left, else
its effect UNKNOWN and nothing resent. A certified refusal before effect (401, 403) stops the
run with ``credential.rejected``, the child in RETRY_WAIT, NONE_PROVEN, for the next run once
the credential is fixed.

A child a lost run left in flight (:func:`take_over`) is replayed with the same key only when a
certification proves the receiver keeps its key long enough (the journal measures the first
attempt's age against it); otherwise its effect is recorded UNKNOWN and nothing is resent.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from dpone.contracts import ERROR_CATALOG, DponeError, ExitClass, canonical_json, content_digest
from dpone.contracts.journal import AttemptPlan, ChildOperation, Lease
from dpone.contracts.sealed import SealedChild
from dpone.contracts.state import StateName
from dpone.executor.supervisor._actions import reconciled_absent, takeover_certified
from dpone.executor.supervisor._context import Run, Withheld
from dpone.executor.supervisor._decide import (
    UNKNOWN,
    Exchange,
    Record,
    RetryLater,
    Stop,
    classify,
    submit_move,
)
from dpone.executor.supervisor._rate import SubmitTurns
from dpone.executor.supervisor._request import check_payload, outbound_request
from dpone.executor.supervisor._results import DeliveryBlocked
from dpone.executor.supervisor._takeover import lost_submit
from dpone.executor.supervisor._transitions import (
    FENCE_REFUSED,
    NOT_STARTED_FINAL,
    NOT_STARTED_RETRY,
    RESPONSE,
    SYNC_SUCCESS_LANDS_IN,
    VERIFIED_FULL,
)
from dpone.executor.transport import Failure, OutboundRequest, Response

__all__ = ["PERMANENT_FENCE_REFUSALS", "classify", "submit", "take_over"]

ORPHAN_MARKER_STATES: Final = frozenset({StateName.SEALED, StateName.RETRY_WAIT})
"""Where an orphan marker at the next attempt's key is recorded (``*_orphan_marker_found``),
besides a child an operator reconciliation proved not applied (its resubmit)."""
PERMANENT_FENCE_REFUSALS: Final = frozenset({"REST_DELIVERY_STALE_GENERATION",
                                            "REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED"})


class _Declined(Exception):
    """The journal refused to plan a takeover replay (before any marker): ``refusal`` says why."""

    def __init__(self, refusal: DponeError) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


def take_over(run: Run, operation: ChildOperation,
              sealed: SealedChild) -> ChildOperation | DeliveryBlocked | Withheld:
    """A child a lost run left in SUBMITTING (refused while its worker still holds the mutation
    lease): replayed with the same key when a certification covers it and the journal plans the
    takeover (the certified key retention covers the first attempt's age, within the submit
    budget), else its effect UNKNOWN under an observation lease, nothing resent."""
    run.writer.probe(operation.operation_id, "mutation")
    if takeover_certified(run.plan):
        try:
            return submit(run, operation, sealed, takeover=True)
        except _Declined as declined:
            refusal = declined.refusal
            extra = {key: value for key, value in refusal.details.items()
                     if isinstance(value, str | int)}
            return run.blocked(lost_submit(run.writer, operation), UNKNOWN,
                               extra={"takeover_refused": refusal.message[:200], **extra})
    return run.blocked(lost_submit(run.writer, operation), UNKNOWN)


def _takeover_attempt(run: Run, operation: ChildOperation, lease: Lease) -> AttemptPlan:
    """The journal's takeover replay of ``operation`` (nothing published yet); declined when
    the journal refuses it or the first attempt's age spent the submit budget."""
    try:
        attempt = run.writer.plan_attempt(operation.operation_id, lease, takeover=True)
    except DponeError as refusal:
        if refusal.code != "REST_DELIVERY_UNSAFE_RETRY":
            raise
        raise _Declined(refusal) from refusal
    budget = run.plan.profile.snapshot.retry.submit.budget_s
    age = attempt.takeover_age_s or 0.0
    if age > budget:
        raise _Declined(DponeError(
            code="REST_DELIVERY_UNSAFE_RETRY", operation_id=operation.operation_id,
            message=f"the child's first attempt is {age:.0f} s old, beyond the profile's "
            f"{budget} s submit budget", details={"first_attempt_age_s": round(age, 1)}))
    return attempt


def submit(run: Run, operation: ChildOperation, sealed: SealedChild, *,
           takeover: bool = False) -> ChildOperation | DeliveryBlocked | Withheld:
    """Take a SEALED or RETRY_WAIT child (``takeover``: a lost run's SUBMITTING child) through
    SUBMITTING to its recorded submit outcome: each exchange's next move is decided by
    :func:`~._decide.submit_move` and carried out here."""
    request = outbound_request(run.plan, sealed, run.artifacts,
                               check_payload(sealed, run.artifacts))
    started = run.clock.monotonic()
    replay = False
    # The mutation lease, and the first attempt planned in the same transaction when the child
    # is due now, with its submit turn; a later attempt (or one still waiting out its delay) is
    # planned in the loop and takes its turn there.
    turns = SubmitTurns(run, started)
    with run.writer.begun(operation.operation_id, turns.request(operation.operation_id)) as begun:
        lease, planned = begun.lease, begun.attempt
        turns.begun(begun.turn)
        if takeover:
            planned = _takeover_attempt(run, operation, lease)
            # The submit budget and the certified retention count from the first attempt.
            started -= planned.takeover_age_s or 0.0
            replay = True
        while True:
            attempt, planned = planned, None
            if attempt is None:
                if operation.state_name == StateName.RETRY_WAIT:
                    run.wait_until(operation.next_check_after)
                attempt = run.writer.plan_attempt(operation.operation_id, lease)
            turns.take(operation, lease)  # the account's shared rate, before any marker
            entered = _enter(run, operation, lease, attempt, replay=replay)
            if isinstance(entered, DeliveryBlocked):
                return entered
            operation = entered
            outcome = _send(run, operation, lease, request, replay=replay)
            if isinstance(outcome, Withheld):
                turns.release()
                return outcome
            move = submit_move(run.plan, sealed, outcome, Exchange(
                StateName(operation.state_name), operation.attempt_ordinal,
                run.clock.monotonic() - started, run.clock.now(), run.rng))
            if isinstance(move, Record):
                # The slot is kept until the record, then freed with the lease's release.
                if move.code is not None:
                    run.gate.shut(operation.operation_id)  # before the answer is recorded
                return _record(run, operation, lease, move)
            turns.release()  # a back-off to send again holds no active-request slot
            if isinstance(move, RetryLater):
                operation, replay = _not_started(run, operation, lease, move), False
                continue
            if isinstance(move, Stop):
                return _stop(run, operation, lease, move)
            # A certified same-key replay: wait out its delay, then send again.
            run.back_off(operation, "replay", move.reason, operation.attempt_ordinal, move.delay)
            replay = True


def _enter(run: Run, operation: ChildOperation, lease: Lease, attempt: AttemptPlan, *,
           replay: bool) -> ChildOperation | DeliveryBlocked:
    """Publish the attempt's MAY_ATTEMPT marker create-if-absent, then the critical SUBMITTING
    transaction."""
    try:
        marker = run.artifacts.put_bytes(attempt.marker_key, canonical_json(attempt.marker))
    except DponeError as conflict:
        if conflict.code != "artifact.conflict" or not (
                operation.state_name in ORPHAN_MARKER_STATES or reconciled_absent(operation)):
            raise
        return _orphan_marker(run, operation, lease, attempt)
    try:
        return run.writer.enter_submitting(attempt, marker.digest, lease, operation.revision,
                                          replay=replay)
    except DponeError as refusal:
        if (refusal.code not in PERMANENT_FENCE_REFUSALS
                or operation.state_name != StateName.SEALED):
            raise
        # A higher generation or an applied append scope forbids this mutation for good.
        refused = run.writer.step(operation, lease, *FENCE_REFUSED, error_code=refusal.code)
        return run.blocked(refused, refusal.code)


def _send(run: Run, operation: ChildOperation, lease: Lease, request: OutboundRequest,
          *, replay: bool) -> Response | Failure | Withheld:
    """Hand the request to the transport unless the run's send gate has shut (then the attempt
    provably never started: RETRY_WAIT, due now). A transport refusal before any byte left is
    recorded and raised."""
    if not run.gate.admit(operation.operation_id, replay=replay):
        return Withheld(run.writer.step(operation, lease, *NOT_STARTED_RETRY,
                                       next_check_after=run.now()))
    started = run.clock.monotonic()
    try:
        outcome = run.transport.send(request)
    except DponeError as refusal:
        run.gate.shut(operation.operation_id)
        if operation.state_name == StateName.SUBMITTING:
            _refused_before_sending(run, operation, lease, refusal)
        refusal.operation_id = refusal.operation_id or operation.operation_id
        raise
    run.telemetry.sent(operation, request.content_length)
    run.telemetry.exchanged("replay" if replay else "submit", outcome,
                            run.clock.monotonic() - started)
    return outcome


def _orphan_marker(run: Run, operation: ChildOperation, lease: Lease,
                   attempt: AttemptPlan) -> DeliveryBlocked:
    """The next attempt's marker key holds another marker (of another journal epoch, or one a
    reconciliation did not cover): a request of that attempt may have reached the receiver, so
    nothing is sent; the child's effect is recorded UNKNOWN with the orphan's digest and the run
    stops for a reconciliation."""
    orphan = content_digest(run.artifacts.get_bytes(attempt.marker_key))
    updated = run.writer.record_orphan_marker(attempt, orphan, lease, operation.revision)
    return run.blocked(updated, "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN",
                       extra={"orphan_marker_key": attempt.marker_key,
                              "orphan_marker_digest": orphan})


def _record(run: Run, operation: ChildOperation, lease: Lease,
            move: Record) -> ChildOperation | DeliveryBlocked:
    kind, values, code = move.kind, move.values, move.code
    # The bounded response scalars are published before the journal write: a receipt survives
    # even when that write fails (lease lost, journal unavailable).
    evidence = run.publish_evidence(operation, "submit-response", {
        "operation_id": operation.operation_id, "attempt_ordinal": operation.attempt_ordinal,
        "outcome": kind, **values})
    due: dt.datetime | None = None
    if kind == "async_receipt_accepted":
        due = run.now() + dt.timedelta(seconds=run.plan.profile.snapshot.timeouts.poll_interval_s)
    elif kind == "duplicate_receipt_same_intent":
        due = run.now()
    receipt = values if code is None else {
        key: values[key] for key in ("http_status", "duplicate_job_id") if key in values}
    # A synchronous answer whose counters account for every row is verified in the same
    # transaction that records it (nothing between the two is I/O).
    verified = VERIFIED_FULL[SYNC_SUCCESS_LANDS_IN] if move.verified else None
    updated = run.writer.settle(operation, lease, *RESPONSE[StateName(operation.state_name), kind],
                               verified=verified, receipt=receipt, next_check_after=due,
                               error_code=code, evidence_digest=evidence)
    if code is None:
        return updated
    ref = run.plan.binding.snapshot.credential_ref
    extra = {"credential_ref": ref} if kind == "rejected_before_effect" and ref else None
    return run.blocked(updated, code, extra=extra)


def _refused_before_sending(run: Run, operation: ChildOperation, lease: Lease,
                            refusal: DponeError) -> None:
    """The transport raised before any request byte left: record why the attempt never started.

    A refusal for want of the environment (exit class 3, e.g. ``credential.unavailable``) leaves
    the child in RETRY_WAIT with no delay (it waits for the fix, not for a time): the next run,
    once the credential is there, submits a new attempt with the same delivery key. A malformed
    request (any other code) would be refused again, so the child ends ``final_not_started``.
    """
    if ERROR_CATALOG[refusal.code].exit_class is ExitClass.UNAVAILABLE:
        run.writer.step(operation, lease, *NOT_STARTED_RETRY, error_code=refusal.code)
        return
    run.writer.step(operation, lease, *NOT_STARTED_FINAL, error_code=refusal.code)


def _not_started(run: Run, operation: ChildOperation, lease: Lease,
                 move: RetryLater) -> ChildOperation:
    """Proven not started: RETRY_WAIT after a full-jitter delay inside this run's budget.

    When the run's submit budget is spent the child still waits in RETRY_WAIT (nothing reached
    the receiver, so nothing is lost by waiting) and the run stops as ``receiver.unavailable``;
    the next run resumes the same delivery key with a new attempt.
    """
    failure = move.failure
    due = run.now() + dt.timedelta(seconds=move.delay or 0.0)
    waiting = run.writer.step(operation, lease, *NOT_STARTED_RETRY, next_check_after=due)
    if move.delay is None:
        raise DponeError(code="receiver.unavailable", operation_id=operation.operation_id,
                         message=f"attempt {operation.attempt_ordinal} provably never reached the "
                         f"receiver ({failure.kind.value}: {failure.detail}); the child waits in "
                         "retry_wait and the next run resumes it",
                         details={"transport_phase": failure.phase.value,
                                  "transport_failure": failure.kind.value})
    run.retrying(waiting, "submit", failure, operation.attempt_ordinal, move.delay)
    return waiting


def _stop(run: Run, operation: ChildOperation, lease: Lease, move: Stop) -> DeliveryBlocked:
    """Record the stop the decision names and report it."""
    if move.shut_first:
        run.gate.shut(operation.operation_id)  # the effect is unknown from here on
    updated = run.writer.step(operation, lease, *move.step, receipt=move.receipt,
                             error_code=move.code)
    return run.blocked(updated, move.code, move.failure, extra=move.extra)
