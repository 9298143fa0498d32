"""Guarded transitions, checkpoint promotion and the replacement watermark map.

``transition`` runs the runtime guard over the stored tuple and commits with a revision CAS;
in the same transaction it appends the bounded observation, records the attempt outcome,
releases capacity in RETRY_WAIT and terminal tuples, and raises the domain's interval
watermark for a fully applied replacement (under the domain lock, taken before the CAS so
every path locks domain before child). ``promote`` extends the contiguous frontier only.
"""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import ChildOperation, Lease, TransitionRequest
from dpone.contracts.state import Evidence, StateContract, TriggerKind
from dpone.journal._core import (
    MAX_OBSERVATIONS_PER_OPERATION,
    check_lease_identity,
    guarded,
    promote_transition,
    records_watermark,
    releases_capacity,
    trigger_kind,
)
from dpone.journal._fence import Interval, Scope, merge_watermark
from dpone.journal.postgres._connection import Tx
from dpone.journal.postgres._ops import (
    apply_decision,
    environment,
    live_lease,
    lock_domains,
    require_child,
)
from dpone.journal.postgres._rows import child_model, generation_key, interval

_PROMOTION = Evidence(kind=TriggerKind.CHECKPOINT, name="CONTIGUOUS_FRONTIER_REACHED",
                      facts=frozenset({"contiguous_frontier"}))


def _check_submit_holder(tx: Tx, row: dict[str, Any], lease: Lease) -> None:
    """After SUBMITTING only the lease that submitted records its outcome under mutation."""
    if lease.kind != "mutation" or row["execution_state"] != "SUBMITTING":
        return
    attempt = tx.one("latest_attempt", operation_id=row["operation_id"])
    if attempt is None or (attempt["lease_holder"], int(attempt["lease_token"])) != (
            lease.holder, lease.token):
        raise DponeError(code="journal.lease_lost", operation_id=row["operation_id"],
                         message="another mutation lease entered SUBMITTING for this attempt; "
                         "a takeover is observation or reconciliation only")


def _raise_watermark(tx: Tx, row: dict[str, Any]) -> None:
    scope = row["scope"]
    domain = row["effect_conflict_domain"]
    new = Interval(Scope(scope.lower, scope.upper), generation_key(row))
    removed = tx.all("remove_touching_watermarks", domain=domain, lo=scope.lower, hi=scope.upper)
    origin = {generation_key(r): r["operation_id"] for r in removed}
    origin[new.generation] = row["operation_id"]
    for piece in merge_watermark([interval(r) for r in removed], new):
        tx.run("insert_watermark", domain=domain, lo=piece.scope.lo, hi=piece.scope.hi,
               generation_end=piece.generation[0], correction_revision=piece.generation[1],
               operation_id=origin[piece.generation])


def transition(tx: Tx, contract: StateContract, request: TransitionRequest,
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
    if listed is not None and records_watermark(contract.tuples[listed.target],
                                                str(row["mutation_kind"])):
        lock_domains(tx, [row["effect_conflict_domain"]])
        row = require_child(tx, request.operation_id)
    _check_submit_holder(tx, row, lease)
    prior_ids: set[str] = set()
    prior_digests: set[str] = set()
    if listed is not None and listed.reconciliation is not None:
        for prior in tx.all("prior_reconciliation", operation_id=request.operation_id):
            prior_ids.update([prior["reconciliation_id"]] if prior["reconciliation_id"] else [])
            prior_digests.update([prior["evidence_digest"]] if prior["evidence_digest"] else [])
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
               document=Jsonb(dict(request.observation)))
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
    return child_model(updated)


def promote(tx: Tx, contract: StateContract, parent_id: str, lease: Lease) -> int:
    check_lease_identity(lease, parent_id, {"checkpoint"})
    lease_row = live_lease(tx, lease)
    epoch, _gate = environment(tx)
    parent = tx.one("lock_parent", parent_id=parent_id)
    if parent is None:
        raise DponeError(code="journal.not_found", operation_id=parent_id,
                         message=f"no parent operation {parent_id} in this environment")
    frontier = int(parent["checkpoint_frontier"])
    for child in tx.all("children_of_parent", parent_id=parent_id):
        ordinal = int(child["ordinal"])
        if ordinal <= frontier:
            continue
        if child["checkpoint_state"] == "PROMOTED":
            frontier = ordinal
            continue
        transition_id = promote_transition(contract, str(child["state_name"]))
        if transition_id is None:
            break
        decision = guarded(contract, child, transition_id,
                           expected_revision=int(child["revision"]), lease_kind="checkpoint",
                           lease_epoch=int(lease_row["journal_epoch"]), current_epoch=epoch,
                           evidence=_PROMOTION)
        apply_decision(tx, contract, child, decision, expected_revision=int(child["revision"]),
                       epoch=epoch, actor=lease.holder)
        frontier = ordinal
    tx.run("advance_frontier", parent_id=parent_id, frontier=frontier)
    return frontier
