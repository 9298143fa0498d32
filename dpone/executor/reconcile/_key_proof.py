"""Reconciling by key: the profile's certified read-only query by key as a proof.

With neither a receipt id nor operator evidence, ``dpone delivery reconcile`` asks the receiver
what it holds under the child's key (:func:`~dpone.executor.reconcile.query_by_key.query_by_key`,
one read-only ``GET``) and turns the answer into a :class:`Proof` or a refusal:

* found: where the profile certifies the found answer as the job's status document
  (``answer: job_status``), that answer proves the effect as a receipt poll's answer would
  (counters against the sealed rows, key echo) and no poll is sent, so an expired receipt does
  not matter; otherwise the job's receipt is polled read-only exactly as ``--receipt-id`` would.
  A job still running is recorded with its receipt and observed by ``resume``;
* absent, past the certified horizon: receiver-proven NOT applied;
* absent, not certified here or before the horizon: ``reconcile.absence_unproven`` (exit 4,
  nothing recorded), naming when absence will prove something;
* no answer about this key: ``receiver.unavailable`` (exit 3) for a transport failure,
  ``reconcile.key_mismatch`` for an answer about another key, ``reconcile.key_query_unclassified``
  (exit 4) for an answer the profile does not classify.

Every evidence digest is computed without the current time, so the preview and ``--apply``
describe the same reconciliation when the receiver's answer is the same.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Final

from dpone.contracts import DponeError, canonical_json, content_digest
from dpone.contracts.documents import ReconciledCounters, ReconciliationProof
from dpone.contracts.journal import ChildOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedChild
from dpone.executor.reconcile._orphans import orphan_absence_unproven
from dpone.executor.reconcile._receipt import PolledReceipt, receipt_field
from dpone.executor.reconcile._service import Proof, prove_by_receipt, prove_by_status
from dpone.executor.reconcile.query_by_key import (
    KeyAbsentProven,
    KeyAbsentUnproven,
    KeyFound,
    KeyQueryUnavailable,
    key_query_of,
    query_by_key,
)
from dpone.executor.transport import RestTransportPort

OTHER_PROOFS: Final = ("--receipt-id R (a job you found in the receiver's console) or "
                       "--evidence FILE (a dpone.operator_evidence.v1 document)")


def prove_by_key_query(plan: RestDeliveryPlan, transport: RestTransportPort,
                       operation: ChildOperation, sealed: SealedChild, *, now: dt.datetime,
                       latest_attempt_at: dt.datetime,
                       untimed_orphans: Sequence[str] = ()) -> Proof:
    """The proof the certified query by key gives for ``operation`` (see the module).

    ``latest_attempt_at`` also counts the orphan markers the reconciliation covers;
    ``untimed_orphans``: orphan marker keys whose send time nothing bounds (another journal
    epoch), so an absent answer proves nothing."""
    result = query_by_key(transport, plan, operation, sealed, now=now,
                          latest_attempt_at=latest_attempt_at)
    if isinstance(result, KeyFound):
        receipt_id = str(result.receipt[receipt_field(plan)])
        if result.status is None:
            return prove_by_receipt(plan, transport, operation, sealed, receipt_id,
                                    lookup=dict(result.evidence))
        status = result.status
        polled = PolledReceipt(outcome=status.outcome, values=dict(status.values),
                               receipt={**result.receipt, **status.values})
        return prove_by_status(plan, operation, sealed, receipt_id, polled,
                               lookup=dict(result.evidence))
    if isinstance(result, KeyAbsentProven | KeyAbsentUnproven) and untimed_orphans:
        raise orphan_absence_unproven(operation, untimed_orphans, result.evidence)
    if isinstance(result, KeyAbsentProven):
        return _absence_proof(plan, operation, sealed, result, latest_attempt_at)
    if isinstance(result, KeyAbsentUnproven):
        raise _unproven(plan, operation, result)
    raise _unavailable(operation, result)


def _absence_proof(plan: RestDeliveryPlan, operation: ChildOperation, sealed: SealedChild,
                   result: KeyAbsentProven, latest_attempt_at: dt.datetime) -> Proof:
    absence = key_query_of(plan).absence
    observed = {"operation_id": operation.operation_id, "outcome": result.outcome,
                "receiver_mutation_key": operation.receiver_mutation_key,
                "latest_attempt_at": latest_attempt_at.isoformat(),
                "horizon_s": absence.receipt_ttl_s + absence.skew_margin_s,
                "environment": plan.environment.ref, **result.evidence}
    return Proof(
        detail=ReconciliationProof(kind="query_by_key", authority="receiver_proven",
                                   evidence_digest=content_digest(canonical_json(observed))),
        effect="not_applied",
        counters=ReconciledCounters(sealed_rows=sealed.descriptor.row_count, accepted_rows=0))


def _unproven(plan: RestDeliveryPlan, operation: ChildOperation,
              result: KeyAbsentUnproven) -> DponeError:
    absence = key_query_of(plan).absence
    details: dict[str, object] = {"reason": result.reason, **result.evidence,
                                  "receiver_mutation_key": operation.receiver_mutation_key}
    if result.proof_possible_at is not None:
        when = result.proof_possible_at.isoformat()
        details["proof_possible_at"] = when
        why = (f"absence proves \"not applied\" only from {when} (the latest attempt started "
               f"less than receipt_ttl_s {absence.receipt_ttl_s} s + skew_margin_s "
               f"{absence.skew_margin_s} s ago): reconcile again then")
    else:
        certified = ", ".join(absence.certified_environments) or "none"
        why = (f"the profile certifies absence as proof only in {certified}, not in "
               f"{plan.environment.ref}")
    return DponeError(
        code="reconcile.absence_unproven", operation_id=operation.operation_id,
        message=f"the receiver holds nothing under child {operation.ordinal}'s key, but {why}; "
        f"the effect stays unknown and nothing was recorded. Or prove it with {OTHER_PROOFS}",
        details=details)


def _unavailable(operation: ChildOperation, result: KeyQueryUnavailable) -> DponeError:
    details: dict[str, object] = {"reason": result.reason, **result.evidence}
    if result.reason == "transport_failure":
        return DponeError(code="receiver.unavailable", operation_id=operation.operation_id,
                          message=f"the query by key of child {operation.ordinal} got no answer "
                          f"({result.evidence.get('transport_failure')}); nothing was recorded",
                          details=details)
    if result.reason == "key_echo_mismatch":
        return DponeError(code="reconcile.key_mismatch", operation_id=operation.operation_id,
                          message=f"the query by key of child {operation.ordinal} answered about "
                          "a job that does not echo its delivery key; nothing was recorded",
                          details=details)
    return DponeError(code="reconcile.key_query_unclassified",
                      operation_id=operation.operation_id,
                      message=f"the query by key of child {operation.ordinal} got an answer the "
                      f"profile does not classify ({result.reason.replace('_', ' ')}, HTTP "
                      f"{result.evidence.get('http_status')}); nothing was recorded. Prove the "
                      f"effect with {OTHER_PROOFS}", details=details)
