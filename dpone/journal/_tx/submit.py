"""The pre-submit sequence: plan the attempt, then the one critical SUBMITTING transaction.

Planning assigns the next attempt ordinal, the deterministic attempt id and the MAY_ATTEMPT
marker document (the same bytes each time the same never-entered attempt is planned: its
creation time is the commit time of the revision it expects). ``begin_attempt`` takes the
mutation lease and, when the child is due now, plans its attempt in the same transaction;
``plan_attempt`` plans under a held lease (a later attempt, or one whose retry delay the
caller has waited out). Nothing is written but the lease. The caller
publishes the marker create-if-absent and then calls ``enter_submitting``, which in one
transaction rechecks the mutation gate and epoch, the revocation list and the remote identity's
expiry (``_governance``), holds the effect domain and rechecks the
overlap fence, reserves one remote-job slot (never more than ``max_remote_jobs``), appends the
attempt bound to the marker digest and CAS-es the child to SUBMITTING.

A certified same-key fenced replay (``fenced_replay=True``) re-enters SUBMITTING from a
SUBMITTING tuple through the same transaction: only the mutation lease that entered the latest
attempt may replay; the previous attempt's outcome is recorded and its reservation released
before the new slot is reserved, so a domain with one remote-job slot can replay. Another
lease replays a submit a lost run left without an outcome only as a takeover
(``plan_attempt(takeover=True)``, :mod:`dpone.journal._takeover`): within the certified key
retention of the child's first attempt, by the journal clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dpone.contracts._axes import ExecutionState
from dpone.contracts._errors import DponeError
from dpone.contracts.journal import AttemptPlan, ChildOperation, Lease, SubmitLease
from dpone.contracts.rate import RateTurnRequest
from dpone.contracts.state import Fact, StateContract, StateName, Transition
from dpone.journal._capacity import reserve
from dpone.journal._cas import apply_decision, guarded
from dpone.journal._effects import absence_reconciled
from dpone.journal._environment import environment
from dpone.journal._governance import submit_authority
from dpone.journal._ids import attempt_id
from dpone.journal._leases import (
    acquire,
    check_lease_identity,
    check_submit_holder,
    held_lease,
    live_lease,
)
from dpone.journal._lookup import fence_refusal, present_child, require_child
from dpone.journal._marker import check_binding, marker_document, marker_key
from dpone.journal._models import child_model
from dpone.journal._opening import read_opening
from dpone.journal._rate import take_turn
from dpone.journal._rows import AttemptRow, ChildRow, EnvironmentRow, ParentRow
from dpone.journal._takeover import takeover as checked_takeover
from dpone.journal._unit import UnitOfWork

SUBMIT_TRANSITIONS: Final[Mapping[str, Transition]] = {
    StateName.SEALED: Transition.SEALED_SUBMIT, StateName.RETRY_WAIT: Transition.RETRY_WAIT_DUE,
    StateName.FINAL_NOT_ACCEPTED_NONE: Transition.RECONCILED_NOT_ACCEPTED_NONE_RESUBMIT,
    StateName.FINAL_ACCEPTED_NONE: Transition.RECONCILED_ACCEPTED_NONE_RESUBMIT,
    StateName.FINAL_FAILED_NONE: Transition.RECONCILED_FAILED_NONE_RESUBMIT,
    StateName.FINAL_CANCELLED_NONE: Transition.RECONCILED_CANCELLED_NONE_RESUBMIT,
    StateName.FINAL_EXPIRED_NONE: Transition.RECONCILED_EXPIRED_NONE_RESUBMIT,
    StateName.FINAL_PROTOCOL_UNKNOWN_NONE: Transition.RECONCILED_PROTOCOL_UNKNOWN_NONE_RESUBMIT}
"""The transitions ``enter_submitting`` takes for a first attempt, a due retry, or a resubmit of
the same delivery key after an operator reconciliation proved that nothing was applied (the
journal proves ``absence_reconciled`` from the audit; automatic verification never does)."""
REPLAY_TRANSITIONS: Final[Mapping[str, Transition]] = {
    StateName.SUBMITTING: Transition.SUBMITTING_FENCED_REPLAY,
    StateName.SUBMITTING_FENCED_REPLAY: Transition.REPLAY_AGAIN}
"""The same-key fenced replays ``enter_submitting(fenced_replay=True)`` takes, by source."""
TAKEOVER_TRANSITIONS: Final[Mapping[str, Transition]] = {
    StateName.SUBMITTING: Transition.SUBMITTING_TAKEOVER_FENCED_REPLAY,
    StateName.SUBMITTING_FENCED_REPLAY: Transition.REPLAY_TAKEOVER_FENCED_REPLAY}
"""The same-key replays of a lost run's submit, by source (an attempt planned as a takeover)."""


def submittable(row: ChildRow, expected_revision: int, *, fenced_replay: bool | None = None,
                takeover: bool = False) -> Transition:
    """The transition that takes ``row`` into SUBMITTING, or the refusal.

    ``fenced_replay`` False admits a first attempt or a due retry only, True a same-key fenced
    replay from a SUBMITTING tuple only; None (attempt planning) admits either. ``takeover``
    admits only the replay of a lost run's submit.
    """
    state = row.state_name
    first = None if takeover else SUBMIT_TRANSITIONS.get(state)
    replay = (TAKEOVER_TRANSITIONS if takeover else REPLAY_TRANSITIONS).get(state)
    if first is not None and fenced_replay is not True:
        return first
    if replay is not None and fenced_replay is not False:
        return replay
    code = ("journal.revision_conflict" if row.revision != expected_revision
            else "journal.illegal_transition")
    reason = ("a fenced replay starts only from SUBMITTING; a first attempt or a due retry "
              "enters without fenced_replay" if first is not None else
              "a takeover after SUBMITTING is observation or reconciliation only; only a "
              "certified same-key fenced replay by the submitting lease re-enters it")
    raise DponeError(code=code, operation_id=row.operation_id,
                     message=f"{state} at revision {row.revision} cannot enter SUBMITTING"
                     f"{' as a fenced replay' if fenced_replay else ''}; {reason}")


def gate_blocked(operation_id: str) -> DponeError:
    """The refusal of a mutation while the environment's gate is BLOCKED."""
    return DponeError(code="REST_DELIVERY_JOURNAL_EPOCH_BLOCKED", operation_id=operation_id,
                      message="the environment mutation gate is BLOCKED; observation and "
                      "reconciliation remain available",
                      hint="`dpone admin gate show` says why; once the reconciliation campaign "
                      "is approved, `dpone admin gate open --epoch <next epoch>` reopens "
                      "mutations and `dpone delivery resume --apply` continues.")


def begin_attempt(tx: UnitOfWork, operation_id: str, holder: str, ttl_seconds: int,
                  rate: RateTurnRequest | None = None) -> SubmitLease:
    """Take the mutation lease; plan the next attempt now when the child is due: a first
    attempt, a resubmit, or a retry whose delay has elapsed by the database clock. With
    ``rate``, a planned attempt takes its submit turn and slot here too (on the new lease)."""
    current = environment(tx)
    lease = acquire(tx, operation_id, "mutation", holder, ttl_seconds, current.journal_epoch,
                    known=True)
    row = require_child(tx, operation_id)  # a missing child refuses: the lease rolls back
    due = row.state_name in SUBMIT_TRANSITIONS and (
        row.state_name != StateName.RETRY_WAIT or row.next_check_after is None
        or row.next_check_after <= tx.now())
    if not due:
        return SubmitLease(lease=lease, attempt=None)
    attempt = _planned(tx, row, lease, current)
    turn = None
    if rate is not None:
        active = rate.active
        if active is not None:
            if active.operation_id != operation_id or active.holder != holder:
                raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                                 message="a submit turn's slot is claimed for the lease taken")
            rate = rate.model_copy(update={
                "active": active.model_copy(update={"lease_token": lease.token})})
        turn = take_turn(tx, rate)
    return SubmitLease(lease=lease, attempt=attempt, turn=turn)


def plan_attempt(tx: UnitOfWork, operation_id: str, lease: Lease, *,
                 takeover: bool = False) -> AttemptPlan:
    check_lease_identity(lease, operation_id, {"mutation"})
    live_lease(tx, lease)
    return _planned(tx, require_child(tx, operation_id), lease, environment(tx),
                    takeover=takeover)


def _planned(tx: UnitOfWork, row: ChildRow, lease: Lease, current: EnvironmentRow, *,
             takeover: bool = False) -> AttemptPlan:
    """The next attempt of ``row`` under the live mutation ``lease`` in the ``current``
    environment (read in this transaction); ``takeover``: the replay of a lost run's submit."""
    operation_id = row.operation_id
    submittable(row, row.revision, takeover=takeover)
    if not takeover:
        check_submit_holder(tx, row, lease)  # a replay is planned only by the submitting lease
    if current.mutation_gate != "OPEN":
        # Refused before any MAY_ATTEMPT marker exists: a marker planned now would bind this
        # epoch, and the epoch changes when the gate reopens.
        raise gate_blocked(operation_id)
    parent, denied = submit_authority(tx, row.parent_id, operation_id)
    if denied is not None:  # revoked or expired: refused before any MAY_ATTEMPT marker
        raise denied
    epoch = current.journal_epoch
    ordinal = row.attempt_ordinal + 1
    age = checked_takeover(tx, row, parent, lease, ordinal).age_s if takeover else None
    namespace = row.operation_namespace
    end, correction = row.generation
    marker = marker_document(
        operation_namespace=namespace, tenant_id=row.tenant_id,
        environment_id=row.environment_id, parent_id=row.parent_id,
        parent_plan_digest=parent.parent_plan_digest, operation_id=operation_id,
        ordinal=row.ordinal, delivery_key=row.delivery_key,
        receiver_mutation_key=row.receiver_mutation_key,
        mutation_intent_digest=row.mutation_intent_digest,
        generation_end=end, correction_revision=correction,
        attempt_ordinal=ordinal, expected_revision=row.revision, journal_epoch=epoch,
        created_at=row.updated_at)
    return AttemptPlan(operation_id=operation_id, attempt_ordinal=ordinal,
                       attempt_id=attempt_id(namespace, operation_id, ordinal),
                       marker_key=marker_key(namespace, operation_id, ordinal), marker=marker,
                       takeover_age_s=age)


def _submit_facts(tx: UnitOfWork, contract: StateContract, row: ChildRow,
                  transition_id: str) -> frozenset[str]:
    """What this transaction proves for the transition into SUBMITTING (its trigger and
    evidence name are the contract's)."""
    facts = {Fact.MAY_ATTEMPT_MARKER_DURABLE, Fact.CAPACITY_RESERVED, Fact.MUTATION_GATE_OPEN}
    if transition_id in REPLAY_TRANSITIONS.values():
        # The caller asserts both facts: the plan's mutation fence is certified in this
        # environment and the replay budget remains.
        facts |= {Fact.CERTIFIED_REMOTE_FENCE, Fact.RETRY_BUDGET_REMAINING}
    elif transition_id in TAKEOVER_TRANSITIONS.values():
        # Proven here (``_takeover``): no outcome recorded, the certified retention covers the
        # first attempt's age, the attempt is within the admitted budget.
        facts |= {Fact.SUBMIT_OUTCOME_ABSENT, Fact.CERTIFIED_REMOTE_FENCE,
                  Fact.RETRY_BUDGET_REMAINING}
    elif transition_id == Transition.RETRY_WAIT_DUE:
        facts.add(Fact.RETRY_BUDGET_REMAINING)
        due = row.next_check_after
        if due is None or due <= tx.now():
            facts.add(Fact.RETRY_DELAY_ELAPSED)
    elif row.state.execution_state is ExecutionState.FINALIZED and absence_reconciled(
            tx, contract, row):
        facts.add(Fact.ABSENCE_RECONCILED)
    return frozenset(facts)


def check_replay_authority(parent: ParentRow, attempt: AttemptPlan) -> None:
    """A same-key replay needs the fence certified at admission and an attempt within the
    profile's budget: the journal enforces both, whatever the caller asserts."""
    if not parent.replay_fence_certified:
        raise DponeError(code="REST_DELIVERY_UNSAFE_RETRY", operation_id=attempt.operation_id,
                         message="the delivery was admitted without a certified receiver fence: "
                         "a request that may have reached the receiver is never replayed")
    limit = parent.max_submit_attempts
    if attempt.attempt_ordinal > limit:
        raise DponeError(code="REST_DELIVERY_UNSAFE_RETRY", operation_id=attempt.operation_id,
                         message=f"attempt {attempt.attempt_ordinal} exceeds the {limit} submit "
                         "attempt(s) admitted for this delivery")


def enter_submitting(tx: UnitOfWork, contract: StateContract, attempt: AttemptPlan, digest: str,
                     lease: Lease, expected_revision: int, *,
                     fenced_replay: bool = False) -> ChildOperation:
    check_lease_identity(lease, attempt.operation_id, {"mutation"})
    opened = read_opening(tx, attempt.operation_id, lease.kind)  # the lease and the child
    lease_epoch = held_lease(lease, opened.lease).journal_epoch
    current = environment(tx, lock="share")  # held against a gate change until commit
    epoch = current.journal_epoch
    if current.mutation_gate != "OPEN":
        raise gate_blocked(attempt.operation_id)
    row = present_child(attempt.operation_id, opened.child)
    parent, denied = submit_authority(tx, row.parent_id, row.operation_id)
    if denied is not None:  # read under the environment row: a revocation cannot interleave
        raise denied
    if tx.lock_domains([row.effect_conflict_domain]):
        row = require_child(tx, attempt.operation_id)
    takeover = attempt.takeover_age_s is not None
    transition_id = submittable(row, expected_revision, fenced_replay=fenced_replay,
                                takeover=takeover)
    if fenced_replay:
        check_replay_authority(parent, attempt)
    if row.revision != expected_revision:
        raise DponeError(code="journal.revision_conflict", operation_id=row.operation_id,
                         message=f"expected revision {expected_revision}, the journal holds "
                         f"{row.revision}")
    previous: AttemptRow | None = None
    if takeover:
        previous = checked_takeover(tx, row, parent, lease, attempt.attempt_ordinal).previous
    elif fenced_replay:
        previous = check_submit_holder(tx, row, lease)
    marker_epoch = check_binding(row, attempt, digest, expected_revision)
    for label, granted in (("lease", lease_epoch), ("marker", marker_epoch)):
        if granted != epoch:
            # A lease or MAY_ATTEMPT marker from another journal epoch is restore
            # reconciliation work, never authority to submit.
            raise DponeError(code="REST_DELIVERY_JOURNAL_EPOCH_BLOCKED",
                             operation_id=row.operation_id,
                             message=f"the {label} belongs to journal epoch {granted}; the "
                             f"current epoch is {epoch}")
    decision = guarded(contract, row, transition_id, expected_revision=expected_revision,
                       lease_kind="mutation", lease_epoch=marker_epoch, current_epoch=epoch,
                       facts=_submit_facts(tx, contract, row, transition_id))
    refusal = fence_refusal(tx, row)
    if refusal is not None:
        raise refusal
    if previous is not None:
        # The replayed attempt ends here: its outcome is this transition and its slot is
        # released before the new attempt reserves one.
        tx.run("record_attempt_outcome", operation_id=row.operation_id,
               attempt_ordinal=row.attempt_ordinal, outcome=transition_id)
        tx.run("release_reservation", attempt_id=previous.attempt_id,
               reason="takeover_replay" if takeover else "fenced_replay")
    reserve(tx, row, attempt, parent.max_remote_jobs)
    tx.run("insert_attempt", attempt_id=attempt.attempt_id, operation_id=row.operation_id,
           attempt_ordinal=attempt.attempt_ordinal, marker_key=attempt.marker_key,
           marker_digest=digest, expected_revision=expected_revision, journal_epoch=epoch,
           lease_holder=lease.holder, lease_token=lease.token)
    updated = apply_decision(tx, contract, row, decision, expected_revision=expected_revision,
                             epoch=epoch, actor=lease.holder)
    return child_model(updated)
