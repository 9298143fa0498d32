"""``dpone.error.v1``: the one document any command writes on stdout when it fails with
``--format json`` (never a traceback, never a secret)."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field

from dpone.contracts._errors import Retryability, Severity
from dpone.contracts.documents._report import Report

ERROR_SCHEMA_ID: Final = "dpone.error.v1"


class ErrorLocation(Report):
    """Where an authoring error is: file, 1-based line and column, and the YAML path."""

    file: str | None
    line: int | None
    column: int | None
    path: str | None


class ErrorDocument(Report):
    schema_id: Literal["dpone.error.v1"] = Field(default=ERROR_SCHEMA_ID, alias="schema")
    code: str
    """A code of the error catalog."""
    message: str
    location: ErrorLocation | None
    hint: str
    operation_id: str | None
    exit_code: int
    retryability: Retryability
    severity: Severity
    details: dict[str, Any]
