"""The published documents: each JSON Schema id and the type its schema is generated from."""

from __future__ import annotations

from typing import Any, Final

from dpone.contracts.certification import CERTIFICATION_SCHEMA_ID, SinkCertification
from dpone.contracts.documents._audit import AUDIT_EXPORT_SCHEMA_ID, AuditExport
from dpone.contracts.documents._compile import (
    CHECK_RESULT_SCHEMA_ID,
    PLAN_RESULT_SCHEMA_ID,
    CheckResult,
    PlanResult,
)
from dpone.contracts.documents._delivery import (
    DELIVERY_RESULT_SCHEMA_ID,
    DeliveryResultDocument,
)
from dpone.contracts.documents._error import ERROR_SCHEMA_ID, ErrorDocument
from dpone.contracts.documents._fault_matrix import (
    FAULT_MATRIX_SCHEMA_ID,
    RemoteEffectFaultMatrix,
)
from dpone.contracts.documents._gate import MUTATION_GATE_SCHEMA_ID, MutationGateDocument
from dpone.contracts.documents._inspection import (
    DELIVERY_INSPECTION_SCHEMA_ID,
    DeliveryInspection,
)
from dpone.contracts.documents._list import DELIVERY_LIST_SCHEMA_ID, DeliveryList
from dpone.contracts.documents._metrics import (
    JOURNAL_METRICS_SCHEMA_ID,
    JournalMetricsDocument,
)
from dpone.contracts.documents._plan_diff import (
    PLAN_DIFF_SCHEMA_ID,
    PLAN_SET_SCHEMA_ID,
    PlanDiffDocument,
    PlanSet,
)
from dpone.contracts.documents._preview import (
    REQUEST_PREVIEW_SCHEMA_ID,
    RequestPreview,
)
from dpone.contracts.documents._prune import (
    PAYLOAD_PRUNE_SCHEMA_ID,
    PayloadPruneDocument,
)
from dpone.contracts.documents._reconciliation import (
    OPERATOR_EVIDENCE_SCHEMA_ID,
    RECONCILE_RESULT_SCHEMA_ID,
    RECONCILIATION_SCHEMA_ID,
    OperatorEvidence,
    ReconcileResult,
    Reconciliation,
)
from dpone.contracts.documents._resume import RESUME_PREVIEW_SCHEMA_ID, ResumePreview
from dpone.contracts.documents._revocations import (
    REVOCATION_LIST_SCHEMA_ID,
    RevocationListDocument,
)
from dpone.contracts.documents._seal import (
    SEAL_RESULT_SCHEMA_ID,
    SealResult,
)

DOCUMENTS: Final[dict[str, Any]] = {
    CHECK_RESULT_SCHEMA_ID: CheckResult,
    PLAN_RESULT_SCHEMA_ID: PlanResult,
    SEAL_RESULT_SCHEMA_ID: SealResult,
    DELIVERY_RESULT_SCHEMA_ID: DeliveryResultDocument,
    DELIVERY_INSPECTION_SCHEMA_ID: DeliveryInspection,
    RESUME_PREVIEW_SCHEMA_ID: ResumePreview,
    DELIVERY_LIST_SCHEMA_ID: DeliveryList,
    MUTATION_GATE_SCHEMA_ID: MutationGateDocument,
    RECONCILE_RESULT_SCHEMA_ID: ReconcileResult,
    ERROR_SCHEMA_ID: ErrorDocument,
    REVOCATION_LIST_SCHEMA_ID: RevocationListDocument,
    PAYLOAD_PRUNE_SCHEMA_ID: PayloadPruneDocument,
    AUDIT_EXPORT_SCHEMA_ID: AuditExport,
    JOURNAL_METRICS_SCHEMA_ID: JournalMetricsDocument,
    PLAN_DIFF_SCHEMA_ID: PlanDiffDocument,
    PLAN_SET_SCHEMA_ID: PlanSet,
    REQUEST_PREVIEW_SCHEMA_ID: RequestPreview,
}
"""Schema id -> the type its JSON Schema is generated from (a model or an annotated union)."""

ARTIFACT_DOCUMENTS: Final[dict[str, Any]] = {
    OPERATOR_EVIDENCE_SCHEMA_ID: OperatorEvidence,
    RECONCILIATION_SCHEMA_ID: Reconciliation,
    FAULT_MATRIX_SCHEMA_ID: RemoteEffectFaultMatrix,
    CERTIFICATION_SCHEMA_ID: SinkCertification,
}
"""Documents that are not command output: what an operator writes, what reconcile stores, the
process-cut fault matrix's evidence, and a receiver certification (`dpone profile certify`
writes it to the registry and prints it with ``--format json``)."""
