"""Operator reconciliation of one child's remote effect (`dpone delivery reconcile`).

Three proofs, strongest first: a certified read-only query by delivery key
(``query_by_key``), a read-only poll of a receipt the operator found (``--receipt-id``), or
operator-attested evidence (``--evidence``). The executor sees the journal and the artifact
store only through their ports.
"""

from dpone.executor.reconcile._decide import attested_effect, check_bounds, polled_effect
from dpone.executor.reconcile._key_proof import prove_by_key_query
from dpone.executor.reconcile._orphans import (
    FoundOrphan,
    absence_time_base,
    find_orphans,
    untimed_absence,
)
from dpone.executor.reconcile._receipt import PolledReceipt, poll_receipt, receipt_field
from dpone.executor.reconcile._service import (
    OPERATOR_LEASE_TTL_S,
    Proof,
    Resolution,
    artifact_key,
    prove_by_evidence,
    prove_by_receipt,
    prove_by_status,
    reconcilable,
    reconciliation,
    reconciliation_id,
    record,
    resolution,
)

__all__ = [
    "OPERATOR_LEASE_TTL_S",
    "FoundOrphan",
    "PolledReceipt",
    "Proof",
    "Resolution",
    "absence_time_base",
    "artifact_key",
    "attested_effect",
    "check_bounds",
    "find_orphans",
    "poll_receipt",
    "polled_effect",
    "prove_by_evidence",
    "prove_by_key_query",
    "prove_by_receipt",
    "prove_by_status",
    "receipt_field",
    "reconcilable",
    "reconciliation",
    "reconciliation_id",
    "record",
    "resolution",
    "untimed_absence",
]
