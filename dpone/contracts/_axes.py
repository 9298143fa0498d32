"""The five independent state axes of a delivery operation (spec "Outcome model")."""

from __future__ import annotations

from enum import StrEnum


class ExecutionState(StrEnum):
    PLANNED = "PLANNED"
    SEALED = "SEALED"
    SUBMITTING = "SUBMITTING"
    RETRY_WAIT = "RETRY_WAIT"
    ACCEPTED = "ACCEPTED"
    WAITING = "WAITING"
    VERIFYING = "VERIFYING"
    FINALIZED = "FINALIZED"


class RemoteEffect(StrEnum):
    NONE_PROVEN = "NONE_PROVEN"
    UNDETERMINED = "UNDETERMINED"
    FULLY_APPLIED = "FULLY_APPLIED"
    PARTIALLY_APPLIED = "PARTIALLY_APPLIED"
    UNKNOWN = "UNKNOWN"


class AcknowledgementState(StrEnum):
    NOT_ACCEPTED = "NOT_ACCEPTED"
    ACCEPTED = "ACCEPTED"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"
    PROTOCOL_UNKNOWN = "PROTOCOL_UNKNOWN"


class VerificationState(StrEnum):
    NOT_RUN = "NOT_RUN"
    PASSED = "PASSED"
    FAILED = "FAILED"
    NOT_PROVABLE = "NOT_PROVABLE"


class CheckpointState(StrEnum):
    BLOCKED = "BLOCKED"
    ELIGIBLE = "ELIGIBLE"
    PROMOTED = "PROMOTED"
