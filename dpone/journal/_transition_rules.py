"""Guarded transitions, checkpoint promotion and the replacement watermark map.

``transition`` runs the runtime guard over the stored tuple and commits with a revision CAS;
in the same transaction it appends the bounded observation, records the attempt outcome,
releases capacity in RETRY_WAIT and terminal tuples, and raises the domain's interval
watermark for a fully applied replacement (``_fence.merge_watermark``) while the effect domain
is held (taken before the CAS, so every path holds the domain before the child).
``promote`` extends the contiguous frontier only; a child skipped as empty input (no rows, no
attempt, no error) holds nothing to promote and the frontier passes over it.
"""

from __future__ import annotations

from typing import Any

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import ChildOperation, Lease, TransitionRequest, empty_input_outcome
from dpone.contracts.state import Evidence, StateContract, Transition, TriggerKind
from dpone.journal._core import (
    MAX_OBSERVATIONS_PER_OPERATION,
    check_lease_identity,
    guarded,
    promote_transition,
    records_watermark,
    releases_capacity,
    trigger_kind,
)
from dpone.journal._fence import Interval, merge_watermark
from dpone.journal._rows_common import child_model, generation_key, interval
from dpone.journal._steps import (
    apply_decision,
    environment,
    fence_refusal,
    live_lease,
    require_child,
    require_parent,
)
from dpone.journal._unit import UnitOfWork

_PROMOTION = Evidence(kind=TriggerKind.CHECKPOINT, name="CONTIGUOUS_FRONTIER_REACHED",
                      facts=frozenset({"contiguous_frontier"}))
_WITHOUT_ROWS = "sealed_without_rows"
"""The guard fact of finalizing an empty child without a request: the journal proves it."""


def check_submit_holder(tx: UnitOfWork, row: dict[str, Any],
                        lease: Lease) -> dict[str, Any] | None:
    """After SUBMITTING only the lease that submitted records its outcome or replays.

    Returns the latest attempt row when the check applies (a mutation lease on a SUBMITTING
    tuple), else None.
    """
    if lease.kind != "mutation" or row["execution_state"] != "SUBMITTING":
        return None
    attempt = tx.one("latest_attempt", operation_id=row["operation_id"])
    if attempt is None or (attempt["lease_holder"], int(attempt["lease_token"])) != (
            lease.holder, lease.token):
        raise DponeError(code="journal.lease_lost", operation_id=row["operation_id"],
                         message="another mutation lease entered SUBMITTING for this attempt; "
                         "a takeover is observation or reconciliation only")
    return attempt


def _raise_watermark(tx: UnitOfWork, row: dict[str, Any]) -> None:
    codec = tx.codec
    bounds = codec.scope(row)
    domain = row["effect_conflict_domain"]
    new = Interval(bounds, generation_key(codec, row))
    removed = tx.all("remove_touching_watermarks", domain=domain, lo=bounds.lo, hi=bounds.hi)
    origin = {generation_key(codec, r): r["operation_id"] for r in removed}
    origin[new.generation] = row["operation_id"]
    for piece in merge_watermark([interval(codec, r) for r in removed], new):
        tx.run("insert_watermark", domain=domain, lo=piece.scope.lo, hi=piece.scope.hi,
               generation_end=piece.generation[0], correction_revision=piece.generation[1],
               operation_id=origin[piece.generation])


def _check_empty_input(tx: UnitOfWork, row: dict[str, Any], listed: Transition) -> None:
    """An empty child finalized without a request: the journal checks what the caller asserts.

    The child holds no rows and never entered SUBMITTING; one that claims a full effect
    (``empty_input: promote``) passes the pre-submit overlap fence under the domain lock, so a
    stale generation is never recorded as applied.
    """
    if int(row["row_count"]) != 0 or int(row["attempt_ordinal"]) != 0:
        raise DponeError(code="journal.illegal_transition", operation_id=row["operation_id"],
                         message=f"{listed.id}: the child holds {row['row_count']} sealed row(s) "
                         f"and {row['attempt_ordinal']} attempt(s); only a child without rows "
                         "is finalized without a request")
    if listed.target == "final_not_started":
        return
    tx.lock_domains([row["effect_conflict_domain"]])
    refusal = fence_refusal(tx, row)
    if refusal is not None:
        raise refusal


def _prior_reconciliation(tx: UnitOfWork, operation_id: str) -> tuple[set[str], set[str]]:
    ids: set[str] = set()
    digests: set[str] = set()
    for prior in tx.all("prior_reconciliation", operation_id=operation_id):
        ids.update([prior["reconciliation_id"]] if prior["reconciliation_id"] else [])
        digests.update([prior["evidence_digest"]] if prior["evidence_digest"] else [])
    return ids, digests


def transition(tx: UnitOfWork, contract: StateContract, request: TransitionRequest,
               lease: Lease) -> ChildOperation:
    check_lease_identity(lease, request.operation_id, {lease.kind})
    lease_row = live_lease(tx, lease)
    epoch, _gate = environment(tx)
    listed = contract.transitions.get(request.transition_id)
    if listed is not None and "attempt_ordinal" in listed.advances:
        raise DponeError(code="journal.illegal_transition", operation_id=request.operation_id,
                         message=f"{request.transition_id} enters SUBMITTING: use "
                         "plan_attempt and enter_submitting")
    row = require_child(tx, request.operation_id)
    if (listed is not None
            and records_watermark(contract.tuples[listed.target], str(row["mutation_kind"]))
            and tx.lock_domains([row["effect_conflict_domain"]])):
        row = require_child(tx, request.operation_id)
    check_submit_holder(tx, row, lease)
    if listed is not None and _WITHOUT_ROWS in listed.requires:
        _check_empty_input(tx, row, listed)
    prior_ids, prior_digests = (_prior_reconciliation(tx, request.operation_id)
                                if listed is not None and listed.reconciliation is not None
                                else (set(), set()))
    evidence = Evidence(kind=trigger_kind(request.evidence_kind, request.transition_id),
                        name=request.evidence_name, facts=frozenset(request.facts),
                        reconciliation_id=request.reconciliation_id,
                        evidence_digest=request.evidence_digest)
    decision = guarded(contract, row, request.transition_id,
                       expected_revision=request.expected_revision, lease_kind=lease.kind,
                       lease_epoch=int(lease_row["journal_epoch"]), current_epoch=epoch,
                       evidence=evidence, prior_reconciliation_ids=prior_ids,
                       prior_evidence_digests=prior_digests)
    updated = apply_decision(
        tx, contract, row, decision, expected_revision=request.expected_revision, epoch=epoch,
        actor=lease.holder, receipt=request.receipt, next_check_after=request.next_check_after,
        error_code=request.error_code, reconciliation_id=request.reconciliation_id,
        evidence_digest=request.evidence_digest)
    if request.observation is not None:
        tx.run("insert_observation", operation_id=request.operation_id,
               observation_ordinal=int(updated["observation_ordinal"]),
               revision=int(updated["revision"]), transition_id=request.transition_id,
               document=dict(request.observation))
        tx.run("prune_observations", operation_id=request.operation_id,
               keep=MAX_OBSERVATIONS_PER_OPERATION)
    if row["execution_state"] == "SUBMITTING":
        tx.run("record_attempt_outcome", operation_id=request.operation_id,
               attempt_ordinal=int(row["attempt_ordinal"]), outcome=request.transition_id)
    if releases_capacity(decision.target):
        tx.run("release_operation_capacity", operation_id=request.operation_id,
               reason=request.transition_id)
    if records_watermark(decision.target, str(row["mutation_kind"])):
        _raise_watermark(tx, updated)
    return child_model(tx.codec, updated)


PROMOTION_BATCH = 64
"""Children read per step of a promotion: only those after the frontier, in ordinal order."""


def _skipped_empty(child: dict[str, Any]) -> bool:
    """Skipped as empty input: nothing to promote, so the frontier passes over it."""
    return empty_input_outcome(str(child["state_name"]), int(child["row_count"]),
                               int(child["attempt_ordinal"]), child["last_error_code"],
                               str(child["remote_effect"])) == "skipped"


def _promote_run(tx: UnitOfWork, contract: StateContract, children: list[dict[str, Any]],
                 frontier: int, lease: Lease, lease_epoch: int, epoch: int) -> int:
    """Promote the checkpoint-ready prefix of ``children``; returns the new frontier."""
    for child in children:
        ordinal = int(child["ordinal"])
        if ordinal != frontier + 1:
            break
        if child["checkpoint_state"] != "PROMOTED" and not _skipped_empty(child):
            transition_id = promote_transition(contract, str(child["state_name"]))
            if transition_id is None:
                break
            decision = guarded(contract, child, transition_id,
                               expected_revision=int(child["revision"]), lease_kind="checkpoint",
                               lease_epoch=lease_epoch, current_epoch=epoch, evidence=_PROMOTION)
            apply_decision(tx, contract, child, decision, expected_revision=int(child["revision"]),
                           epoch=epoch, actor=lease.holder)
        frontier = ordinal
    return frontier


def promote(tx: UnitOfWork, contract: StateContract, parent_id: str, lease: Lease) -> int:
    """Promote the contiguous run of checkpoint-ready children after the frontier."""
    check_lease_identity(lease, parent_id, {"checkpoint"})
    lease_row = live_lease(tx, lease)
    epoch, _gate = environment(tx)
    frontier = int(require_parent(tx, parent_id, lock=True)["checkpoint_frontier"])
    while True:
        batch = tx.all("children_after_frontier", parent_id=parent_id, frontier=frontier,
                       batch=PROMOTION_BATCH)
        advanced = _promote_run(tx, contract, batch, frontier, lease,
                                int(lease_row["journal_epoch"]), epoch)
        whole_batch = advanced == frontier + len(batch) == frontier + PROMOTION_BATCH
        frontier = advanced
        if not whole_batch:
            break
    tx.run("advance_frontier", parent_id=parent_id, frontier=frontier)
    return frontier
