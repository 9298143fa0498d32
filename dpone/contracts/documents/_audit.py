"""``dpone.audit_export.v1``: the journal's audit trail as `dpone admin audit` exports it.

One record per audited decision of the environment, oldest first: who (``actor``) took which
decision (``transition_id``: a contract transition, or ``operator_<command>`` for an operator's
resume, reconcile or prune) on which operation, from and to which state at which revision, with
the digests it was expected under and the artifact that proves it. ``--format ndjson`` writes
the same records one JSON object a line, nothing else.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from dpone.contracts.documents._report import Report, Timestamp
from dpone.contracts.journal import AuditRecord

AUDIT_EXPORT_SCHEMA_ID: Final = "dpone.audit_export.v1"


class AuditEntry(Report, AuditRecord):
    """One audit record, as the journal holds it (:class:`~dpone.contracts.journal.AuditRecord`),
    its instant written as every document writes one."""

    at: Timestamp
    """When the journal recorded it (the journal's clock)."""


class AuditExport(Report):
    schema_id: Literal["dpone.audit_export.v1"] = Field(default=AUDIT_EXPORT_SCHEMA_ID,
                                                        alias="schema")
    journal: str
    """The journal URL, its password redacted."""
    environment_id: str
    operation_id: str | None
    """Only this delivery (with its children) or child, when given."""
    since: Timestamp | None
    """Only records at or after this journal time, when given."""
    limit: int
    truncated: bool
    """True when the export stopped at ``limit`` records: more follow (use ``--since``)."""
    records: tuple[AuditEntry, ...]
