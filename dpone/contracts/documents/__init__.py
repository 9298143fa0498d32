"""Every ``--format json`` document the CLI writes, as a closed, frozen model with a published
Draft 2020-12 JSON Schema (``dpone/contracts/schemas/<schema id>.schema.json``).

Each document names its schema in its ``schema`` field; :data:`DOCUMENTS` maps that id to the
model (or, for ``dpone.delivery_result.v1``, the union of its statuses) the schema is generated
from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpone.contracts._exports import lazy_exports

if TYPE_CHECKING:
    from dpone.contracts.documents._audit import AUDIT_EXPORT_SCHEMA_ID, AuditEntry, AuditExport
    from dpone.contracts.documents._children import ChildRow, ReceiptScalar
    from dpone.contracts.documents._compile import (
        CHECK_RESULT_SCHEMA_ID,
        PLAN_RESULT_SCHEMA_ID,
        BindingSummary,
        CheckResult,
        CompileSummary,
        DigestSummary,
        FenceSummary,
        MutationSummary,
        PlanResult,
        ProfileSummary,
        PublishedPlan,
    )
    from dpone.contracts.documents._delivery import (
        DELIVERY_RESULT_SCHEMA_ID,
        BlockedResult,
        BlockedSection,
        CompletedResult,
        DeliveryResultDocument,
        EmptyResult,
        PendingResult,
        PendingSection,
        SourceChange,
        StoppedResult,
        StoppedSection,
    )
    from dpone.contracts.documents._error import ERROR_SCHEMA_ID, ErrorDocument, ErrorLocation
    from dpone.contracts.documents._fault_matrix import (
        FAULT_MATRIX_SCHEMA_ID,
        MatrixCell,
        MatrixChild,
        MatrixCommand,
        MatrixTotals,
        RemoteEffectFaultMatrix,
    )
    from dpone.contracts.documents._gate import MUTATION_GATE_SCHEMA_ID, MutationGateDocument
    from dpone.contracts.documents._inspection import (
        DELIVERY_INSPECTION_SCHEMA_ID,
        AttemptSummary,
        DeliveryInspection,
        HeldLease,
        InspectedChild,
        KeyEcho,
        LikelyCause,
        ObservationSummary,
        OperatorActionSummary,
        VerificationBasis,
    )
    from dpone.contracts.documents._list import DELIVERY_LIST_SCHEMA_ID, DeliveryList, ListedDelivery
    from dpone.contracts.documents._metrics import (
        JOURNAL_METRICS_SCHEMA_ID,
        JournalMetricsDocument,
        MetricSeries,
    )
    from dpone.contracts.documents._plan_diff import (
        PLAN_DIFF_SCHEMA_ID,
        PLAN_SET_SCHEMA_ID,
        ChangedField,
        ChildEstimate,
        ConsequenceGroup,
        ExposedDelivery,
        GoldenPlan,
        IdentityChange,
        JournalExposure,
        PlanComparison,
        PlanDiffDocument,
        PlanSet,
        PlanSide,
    )
    from dpone.contracts.documents._preview import (
        REQUEST_PREVIEW_SCHEMA_ID,
        PreviewedRequest,
        PreviewHeader,
        PreviewKeys,
        PreviewReceipt,
        RequestPreview,
    )
    from dpone.contracts.documents._prune import (
        PAYLOAD_PRUNE_SCHEMA_ID,
        PayloadPruneDocument,
        PruneKeptKey,
        PruneParent,
    )
    from dpone.contracts.documents._published import ARTIFACT_DOCUMENTS, DOCUMENTS
    from dpone.contracts.documents._reconciliation import (
        MAX_EVIDENCE_BYTES,
        OPERATOR_EVIDENCE_SCHEMA_ID,
        RECONCILE_RESULT_SCHEMA_ID,
        RECONCILIATION_KEY_PREFIX,
        RECONCILIATION_SCHEMA_ID,
        ArtifactSummary,
        OperatorEvidence,
        ProofKind,
        ProvenEffect,
        ReconciledCounters,
        ReconciledState,
        ReconcileResult,
        Reconciliation,
        ReconciliationProof,
    )
    from dpone.contracts.documents._report import Interval, Report, Timestamp
    from dpone.contracts.documents._resume import RESUME_PREVIEW_SCHEMA_ID, PreviewChild, ResumePreview
    from dpone.contracts.documents._revocations import (
        REVOCATION_LIST_SCHEMA_ID,
        RevocationChangeSummary,
        RevocationHistoryEntry,
        RevocationListDocument,
        RevokedEntry,
    )
    from dpone.contracts.documents._seal import (
        SEAL_RESULT_SCHEMA_ID,
        SealedChildSummary,
        SealedScope,
        SealResult,
    )

__all__ = [
    "ARTIFACT_DOCUMENTS",
    "AUDIT_EXPORT_SCHEMA_ID",
    "CHECK_RESULT_SCHEMA_ID",
    "DELIVERY_INSPECTION_SCHEMA_ID",
    "DELIVERY_LIST_SCHEMA_ID",
    "DELIVERY_RESULT_SCHEMA_ID",
    "DOCUMENTS",
    "ERROR_SCHEMA_ID",
    "FAULT_MATRIX_SCHEMA_ID",
    "JOURNAL_METRICS_SCHEMA_ID",
    "MAX_EVIDENCE_BYTES",
    "MUTATION_GATE_SCHEMA_ID",
    "OPERATOR_EVIDENCE_SCHEMA_ID",
    "PAYLOAD_PRUNE_SCHEMA_ID",
    "PLAN_DIFF_SCHEMA_ID",
    "PLAN_RESULT_SCHEMA_ID",
    "PLAN_SET_SCHEMA_ID",
    "RECONCILE_RESULT_SCHEMA_ID",
    "RECONCILIATION_KEY_PREFIX",
    "RECONCILIATION_SCHEMA_ID",
    "REQUEST_PREVIEW_SCHEMA_ID",
    "RESUME_PREVIEW_SCHEMA_ID",
    "REVOCATION_LIST_SCHEMA_ID",
    "SEAL_RESULT_SCHEMA_ID",
    "ArtifactSummary",
    "AttemptSummary",
    "AuditEntry",
    "AuditExport",
    "BindingSummary",
    "BlockedResult",
    "BlockedSection",
    "ChangedField",
    "CheckResult",
    "ChildEstimate",
    "ChildRow",
    "CompileSummary",
    "CompletedResult",
    "ConsequenceGroup",
    "DeliveryInspection",
    "DeliveryList",
    "DeliveryResultDocument",
    "DigestSummary",
    "EmptyResult",
    "ErrorDocument",
    "ErrorLocation",
    "ExposedDelivery",
    "FenceSummary",
    "GoldenPlan",
    "HeldLease",
    "IdentityChange",
    "InspectedChild",
    "Interval",
    "JournalExposure",
    "JournalMetricsDocument",
    "KeyEcho",
    "LikelyCause",
    "ListedDelivery",
    "MatrixCell",
    "MatrixChild",
    "MatrixCommand",
    "MatrixTotals",
    "MetricSeries",
    "MutationGateDocument",
    "MutationSummary",
    "ObservationSummary",
    "OperatorActionSummary",
    "OperatorEvidence",
    "PayloadPruneDocument",
    "PendingResult",
    "PendingSection",
    "PlanComparison",
    "PlanDiffDocument",
    "PlanResult",
    "PlanSet",
    "PlanSide",
    "PreviewChild",
    "PreviewHeader",
    "PreviewKeys",
    "PreviewReceipt",
    "PreviewedRequest",
    "ProfileSummary",
    "ProofKind",
    "ProvenEffect",
    "PruneKeptKey",
    "PruneParent",
    "PublishedPlan",
    "ReceiptScalar",
    "ReconcileResult",
    "ReconciledCounters",
    "ReconciledState",
    "Reconciliation",
    "ReconciliationProof",
    "RemoteEffectFaultMatrix",
    "Report",
    "RequestPreview",
    "ResumePreview",
    "RevocationChangeSummary",
    "RevocationHistoryEntry",
    "RevocationListDocument",
    "RevokedEntry",
    "SealResult",
    "SealedChildSummary",
    "SealedScope",
    "SourceChange",
    "StoppedResult",
    "StoppedSection",
    "Timestamp",
    "VerificationBasis",
]

# Each name is imported from its module on first use (PEP 562): a command that writes one document
# does not create the models of every other (about 0.04 s of each command's start).
_MODULES = {
    "_audit": ("AUDIT_EXPORT_SCHEMA_ID", "AuditEntry", "AuditExport"),
    "_children": ("ChildRow", "ReceiptScalar"),
    "_compile": (
        "CHECK_RESULT_SCHEMA_ID", "PLAN_RESULT_SCHEMA_ID", "BindingSummary", "CheckResult",
        "CompileSummary", "DigestSummary", "FenceSummary", "MutationSummary", "PlanResult",
        "ProfileSummary", "PublishedPlan"),
    "_delivery": (
        "DELIVERY_RESULT_SCHEMA_ID", "BlockedResult", "BlockedSection", "CompletedResult",
        "DeliveryResultDocument", "EmptyResult", "PendingResult", "PendingSection", "SourceChange",
        "StoppedResult", "StoppedSection"),
    "_error": ("ERROR_SCHEMA_ID", "ErrorDocument", "ErrorLocation"),
    "_fault_matrix": (
        "FAULT_MATRIX_SCHEMA_ID", "MatrixCell", "MatrixChild", "MatrixCommand", "MatrixTotals",
        "RemoteEffectFaultMatrix"),
    "_gate": ("MUTATION_GATE_SCHEMA_ID", "MutationGateDocument"),
    "_inspection": (
        "DELIVERY_INSPECTION_SCHEMA_ID", "AttemptSummary", "DeliveryInspection", "HeldLease",
        "InspectedChild", "KeyEcho", "LikelyCause", "ObservationSummary", "OperatorActionSummary",
        "VerificationBasis"),
    "_list": ("DELIVERY_LIST_SCHEMA_ID", "DeliveryList", "ListedDelivery"),
    "_metrics": ("JOURNAL_METRICS_SCHEMA_ID", "JournalMetricsDocument", "MetricSeries"),
    "_plan_diff": (
        "PLAN_DIFF_SCHEMA_ID", "PLAN_SET_SCHEMA_ID", "ChangedField", "ChildEstimate",
        "ConsequenceGroup", "ExposedDelivery", "GoldenPlan", "IdentityChange", "JournalExposure",
        "PlanComparison", "PlanDiffDocument", "PlanSet", "PlanSide"),
    "_preview": (
        "REQUEST_PREVIEW_SCHEMA_ID", "PreviewedRequest", "PreviewHeader", "PreviewKeys",
        "PreviewReceipt", "RequestPreview"),
    "_prune": ("PAYLOAD_PRUNE_SCHEMA_ID", "PayloadPruneDocument", "PruneKeptKey", "PruneParent"),
    "_reconciliation": (
        "MAX_EVIDENCE_BYTES", "OPERATOR_EVIDENCE_SCHEMA_ID", "RECONCILE_RESULT_SCHEMA_ID",
        "RECONCILIATION_KEY_PREFIX", "RECONCILIATION_SCHEMA_ID", "ArtifactSummary",
        "OperatorEvidence", "ProofKind", "ProvenEffect", "ReconciledCounters", "ReconciledState",
        "ReconcileResult", "Reconciliation", "ReconciliationProof"),
    "_report": ("Interval", "Report", "Timestamp"),
    "_resume": ("RESUME_PREVIEW_SCHEMA_ID", "PreviewChild", "ResumePreview"),
    "_revocations": (
        "REVOCATION_LIST_SCHEMA_ID", "RevocationChangeSummary", "RevocationHistoryEntry",
        "RevocationListDocument", "RevokedEntry"),
    "_seal": ("SEAL_RESULT_SCHEMA_ID", "SealedChildSummary", "SealedScope", "SealResult"),
    "_published": ("ARTIFACT_DOCUMENTS", "DOCUMENTS"),
}
__getattr__ = lazy_exports(__name__, {name: module for module, names in _MODULES.items()
                                      for name in names})
