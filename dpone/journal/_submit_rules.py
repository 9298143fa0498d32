"""The pre-submit sequence: plan the attempt, then the one critical SUBMITTING transaction.

``plan_attempt`` assigns the next attempt ordinal, the deterministic attempt id and the
MAY_ATTEMPT marker document (its creation time read from the database clock). The caller
publishes the marker create-if-absent and then calls ``enter_submitting``, which in one
transaction rechecks the mutation gate and epoch, holds the effect domain and rechecks the
overlap fence, reserves one remote-job slot (never more than ``max_remote_jobs``), appends the
attempt bound to the marker digest and CAS-es the child to SUBMITTING. Reservations are
repaired by attempt id.

A certified same-key fenced replay (``fenced_replay=True``) re-enters SUBMITTING from a
SUBMITTING tuple through the same transaction: only the mutation lease that entered the latest
attempt may replay; the previous attempt's outcome is recorded and its reservation released
before the new slot is reserved, so a domain with one remote-job slot can replay.
"""

from __future__ import annotations

from typing import Any

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import AttemptPlan, ChildOperation, Lease
from dpone.contracts.state import Evidence, StateContract, TriggerKind
from dpone.journal._core import (
    REPLAY_TRANSITIONS,
    SUBMIT_TRANSITIONS,
    attempt_id,
    check_lease_identity,
    guarded,
    marker_digest,
    marker_document,
    marker_key,
)
from dpone.journal._rows_common import child_model, generation_key
from dpone.journal._steps import (
    apply_decision,
    audit,
    environment,
    fence_refusal,
    live_lease,
    require_child,
    require_parent,
)
from dpone.journal._transition_rules import check_submit_holder
from dpone.journal._unit import UnitOfWork

HOLDING_EXECUTION = frozenset({"SUBMITTING", "ACCEPTED", "WAITING", "VERIFYING"})


def submittable(row: dict[str, Any], expected_revision: int, *,
                fenced_replay: bool | None = None) -> str:
    """The transition that takes ``row`` into SUBMITTING, or the refusal.

    ``fenced_replay`` False admits a first attempt or a due retry only, True a same-key fenced
    replay from a SUBMITTING tuple only; None (attempt planning) admits either.
    """
    state = str(row["state_name"])
    first, replay = SUBMIT_TRANSITIONS.get(state), REPLAY_TRANSITIONS.get(state)
    if first is not None and fenced_replay is not True:
        return first
    if replay is not None and fenced_replay is not False:
        return replay
    code = ("journal.revision_conflict" if int(row["revision"]) != expected_revision
            else "journal.illegal_transition")
    reason = ("a fenced replay starts only from SUBMITTING; a first attempt or a due retry "
              "enters without fenced_replay" if first is not None else
              "a takeover after SUBMITTING is observation or reconciliation only; only a "
              "certified same-key fenced replay by the submitting lease re-enters it")
    raise DponeError(code=code, operation_id=row["operation_id"],
                     message=f"{state} at revision {row['revision']} cannot enter SUBMITTING"
                     f"{' as a fenced replay' if fenced_replay else ''}; {reason}")


def plan_attempt(tx: UnitOfWork, operation_id: str, lease: Lease) -> AttemptPlan:
    check_lease_identity(lease, operation_id, {"mutation"})
    live_lease(tx, lease)
    row = require_child(tx, operation_id)
    submittable(row, int(row["revision"]))
    check_submit_holder(tx, row, lease)  # a replay is planned only by the submitting lease
    epoch, _gate = environment(tx)
    parent = require_parent(tx, row["parent_id"])
    ordinal = int(row["attempt_ordinal"]) + 1
    namespace = row["operation_namespace"]
    end, correction = generation_key(tx.codec, row)
    marker = marker_document(
        operation_namespace=namespace, tenant_id=row["tenant_id"],
        environment_id=row["environment_id"], parent_id=row["parent_id"],
        parent_plan_digest=parent["parent_plan_digest"], operation_id=operation_id,
        ordinal=int(row["ordinal"]), delivery_key=row["delivery_key"],
        receiver_mutation_key=row["receiver_mutation_key"],
        mutation_intent_digest=row["mutation_intent_digest"],
        generation_end=end, correction_revision=correction,
        attempt_ordinal=ordinal, expected_revision=int(row["revision"]), journal_epoch=epoch,
        created_at=tx.now())
    return AttemptPlan(operation_id=operation_id, attempt_ordinal=ordinal,
                       attempt_id=attempt_id(namespace, operation_id, ordinal),
                       marker_key=marker_key(namespace, operation_id, ordinal), marker=marker)


def check_binding(row: dict[str, Any], attempt: AttemptPlan, digest: str,
                  expected_revision: int) -> int:
    """The marker must be this attempt's, for this revision, and ``digest`` its exact bytes."""
    namespace, operation_id = row["operation_namespace"], row["operation_id"]
    if attempt.attempt_ordinal != int(row["attempt_ordinal"]) + 1:
        raise DponeError(code="journal.revision_conflict", operation_id=operation_id,
                         message=f"attempt {attempt.attempt_ordinal} is not the next attempt")
    marker = attempt.marker
    expected = {
        "attempt_id": attempt_id(namespace, operation_id, attempt.attempt_ordinal),
        "operation_id": operation_id, "attempt_ordinal": attempt.attempt_ordinal,
        "expected_journal_revision": expected_revision,
        "mutation_intent_digest": row["mutation_intent_digest"],
        "operation_namespace": namespace,
    }
    mismatched = sorted(key for key, value in expected.items() if marker.get(key) != value)
    if (mismatched or attempt.attempt_id != expected["attempt_id"]
            or attempt.marker_key != marker_key(namespace, operation_id, attempt.attempt_ordinal)):
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message="the MAY_ATTEMPT marker does not bind this attempt",
                         details={"mismatched": mismatched})
    if marker_digest(marker) != digest:
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message="the marker digest is not the digest of the marker document")
    return int(marker.get("journal_epoch", -1))


def _reserve(tx: UnitOfWork, row: dict[str, Any], attempt: AttemptPlan) -> None:
    """Take the lowest free remote-job slot of the domain, or refuse: capacity exhausted."""
    domain = row["effect_conflict_domain"]
    limit = int(require_parent(tx, row["parent_id"])["max_remote_jobs"])
    held = tx.all("active_slots", domain=domain)
    taken = {int(r["slot"]) for r in held}
    free = [slot for slot in range(1, limit + 1) if slot not in taken]
    if not free:
        holders = [require_child(tx, str(r["operation_id"])) for r in held]
        settled = [h for h in holders if h["execution_state"] == "FINALIZED"]
        if settled and len(settled) == len(holders):
            # Nothing will release these slots on its own: an unresolved effect in the domain.
            raise DponeError(code="REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT",
                             operation_id=row["operation_id"],
                             message=f"the effect domain's remote-job slots are held by "
                             f"{settled[0]['operation_id']} whose remote effect is "
                             f"{settled[0]['remote_effect']}: reconcile it before any further "
                             "mutation in this domain",
                             details={"holders": [h["operation_id"] for h in settled]})
        raise DponeError(code="journal.capacity_exhausted", operation_id=row["operation_id"],
                         message=f"all {limit} remote-job slots of the effect domain are held")
    tx.run("reserve_slot", attempt_id=attempt.attempt_id, operation_id=row["operation_id"],
           domain=domain, slot=free[0])


def _submit_evidence(tx: UnitOfWork, row: dict[str, Any],
                     transition_id: str) -> Evidence:
    facts = {"may_attempt_marker_durable", "capacity_reserved", "mutation_gate_open"}
    kind, name = TriggerKind.INTERNAL, "MAY_ATTEMPT_MARKER_BOUND"
    if transition_id in REPLAY_TRANSITIONS.values():
        # The caller asserts both facts: the plan's mutation fence is certified in this
        # environment and the replay budget remains.
        kind, name = TriggerKind.TRANSPORT, "CERTIFIED_FENCE_PERMITS_REPLAY"
        facts |= {"certified_remote_fence", "retry_budget_remaining"}
    elif transition_id == "retry_wait_due":
        kind, name = TriggerKind.TIMER, "RETRY_DELAY_ELAPSED"
        facts.add("retry_budget_remaining")
        due = tx.codec.optional_moment(row["next_check_after"])
        if due is None or due <= tx.now():
            facts.add("retry_delay_elapsed")
    return Evidence(kind=kind, name=name, facts=frozenset(facts))


def check_replay_authority(parent: dict[str, Any], attempt: AttemptPlan) -> None:
    """A same-key replay needs the fence certified at admission and an attempt within the
    profile's budget: the journal enforces both, whatever the caller asserts."""
    if not bool(parent["replay_fence_certified"]):
        raise DponeError(code="REST_DELIVERY_UNSAFE_RETRY", operation_id=attempt.operation_id,
                         message="the delivery was admitted without a certified receiver fence: "
                         "a request that may have reached the receiver is never replayed")
    limit = int(parent["max_submit_attempts"])
    if attempt.attempt_ordinal > limit:
        raise DponeError(code="REST_DELIVERY_UNSAFE_RETRY", operation_id=attempt.operation_id,
                         message=f"attempt {attempt.attempt_ordinal} exceeds the {limit} submit "
                         "attempt(s) admitted for this delivery")


def enter_submitting(tx: UnitOfWork, contract: StateContract, attempt: AttemptPlan, digest: str,
                     lease: Lease, expected_revision: int, *,
                     fenced_replay: bool = False) -> ChildOperation:
    check_lease_identity(lease, attempt.operation_id, {"mutation"})
    lease_epoch = int(live_lease(tx, lease)["journal_epoch"])
    epoch, gate = environment(tx, lock="share")
    if gate != "OPEN":
        raise DponeError(code="REST_DELIVERY_JOURNAL_EPOCH_BLOCKED", operation_id=attempt.operation_id,
                         message="the environment mutation gate is BLOCKED; observation and "
                         "reconciliation remain available")
    row = require_child(tx, attempt.operation_id)
    if tx.lock_domains([row["effect_conflict_domain"]]):
        row = require_child(tx, attempt.operation_id)
    transition_id = submittable(row, expected_revision, fenced_replay=fenced_replay)
    if fenced_replay:
        check_replay_authority(require_parent(tx, row["parent_id"]), attempt)
    if int(row["revision"]) != expected_revision:
        raise DponeError(code="journal.revision_conflict", operation_id=row["operation_id"],
                         message=f"expected revision {expected_revision}, the journal holds "
                         f"{row['revision']}")
    previous = check_submit_holder(tx, row, lease) if fenced_replay else None
    marker_epoch = check_binding(row, attempt, digest, expected_revision)
    for label, granted in (("lease", lease_epoch), ("marker", marker_epoch)):
        if granted != epoch:
            # A lease or MAY_ATTEMPT marker from another journal epoch is restore
            # reconciliation work, never authority to submit.
            raise DponeError(code="REST_DELIVERY_JOURNAL_EPOCH_BLOCKED",
                             operation_id=row["operation_id"],
                             message=f"the {label} belongs to journal epoch {granted}; the "
                             f"current epoch is {epoch}")
    decision = guarded(contract, row, transition_id, expected_revision=expected_revision,
                       lease_kind="mutation", lease_epoch=marker_epoch, current_epoch=epoch,
                       evidence=_submit_evidence(tx, row, transition_id))
    refusal = fence_refusal(tx, row)
    if refusal is not None:
        raise refusal
    if previous is not None:
        # The replayed attempt ends here: its outcome is this transition and its slot is
        # released before the new attempt reserves one.
        tx.run("record_attempt_outcome", operation_id=row["operation_id"],
               attempt_ordinal=int(row["attempt_ordinal"]), outcome=transition_id)
        tx.run("release_reservation", attempt_id=previous["attempt_id"], reason="fenced_replay")
    _reserve(tx, row, attempt)
    tx.run("insert_attempt", attempt_id=attempt.attempt_id, operation_id=row["operation_id"],
           attempt_ordinal=attempt.attempt_ordinal, marker_key=attempt.marker_key,
           marker_digest=digest, expected_revision=expected_revision, journal_epoch=epoch,
           lease_holder=lease.holder, lease_token=lease.token)
    updated = apply_decision(tx, contract, row, decision, expected_revision=expected_revision,
                             epoch=epoch, actor=lease.holder)
    return child_model(tx.codec, updated)


def repair_reservation(tx: UnitOfWork, attempt_id_: str, actor: str) -> bool:
    """Release the reservation of ``attempt_id_`` when no live attempt holds it any more."""
    row = tx.one("get_reservation", attempt_id=attempt_id_)
    if row is None:
        raise DponeError(code="journal.not_found",
                         message=f"no capacity reservation for attempt {attempt_id_}")
    if row["released_at"] is not None:
        return False
    holds = (row["attempt_ordinal"] is not None
             and row["attempt_ordinal"] == row["current_attempt"]
             and (row["execution_state"] in HOLDING_EXECUTION or row["remote_effect"] == "UNKNOWN"))
    if holds:
        return False
    tx.run("release_reservation", attempt_id=attempt_id_, reason="repair_orphan")
    audit(tx, {"operation_id": row["operation_id"]}, actor=actor,
          transition_id="capacity_repair", from_state=None, to_state=None, revision=None,
          digests={"attempt_id": attempt_id_})
    return True
