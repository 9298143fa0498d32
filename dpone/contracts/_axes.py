"""The five independent state axes of a delivery operation (spec "Outcome model") and the
one type of a point on them, :class:`StateTuple`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

AXES: Final[tuple[str, ...]] = (
    "execution_state",
    "remote_effect",
    "acknowledgement_state",
    "verification_state",
    "checkpoint_state",
)


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


@dataclass(frozen=True, slots=True)
class StateTuple:
    """One point of the five-axis outcome model: what the guard checks against the contract's
    legal tuples and what the journal reports of an operation (its ``axes``, a field of the
    pydantic models, which serialize it as a mapping of axis name to value)."""

    execution_state: ExecutionState
    remote_effect: RemoteEffect
    acknowledgement_state: AcknowledgementState
    verification_state: VerificationState
    checkpoint_state: CheckpointState

    def axis(self, name: str) -> str:
        """The value of axis ``name`` as its string."""
        return str(getattr(self, name))

    def render(self) -> str:
        return "/".join(self.axis(name) for name in AXES)

    def to_document(self) -> dict[str, str]:
        """The axes as plain strings, keyed by axis name, in axis order."""
        return {name: self.axis(name) for name in AXES}
