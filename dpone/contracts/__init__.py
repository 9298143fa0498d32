"""Pure contracts: frozen models, state axes, identity algebra H, error catalog, ports.

No I/O and no runtime library imports live here.
"""

from dpone.contracts._axes import (
    AcknowledgementState,
    CheckpointState,
    ExecutionState,
    RemoteEffect,
    StateTuple,
    VerificationState,
)
from dpone.contracts._base import Digest, Name, StrictModel, canonical_json, content_digest
from dpone.contracts._errors import (
    COMPILE_ERRORS,
    ERROR_CATALOG,
    REST_DELIVERY_ERRORS,
    DponeError,
    ErrorSpec,
    EvidenceRetention,
    ExitClass,
    Location,
    Retryability,
    Severity,
)

__all__ = [
    "COMPILE_ERRORS",
    "ERROR_CATALOG",
    "REST_DELIVERY_ERRORS",
    "AcknowledgementState",
    "CheckpointState",
    "Digest",
    "DponeError",
    "ErrorSpec",
    "EvidenceRetention",
    "ExecutionState",
    "ExitClass",
    "Location",
    "Name",
    "RemoteEffect",
    "Retryability",
    "Severity",
    "StateTuple",
    "StrictModel",
    "VerificationState",
    "canonical_json",
    "content_digest",
]
