"""Deterministic identities of parents, children and attempts (pure: no I/O)."""

from __future__ import annotations

from dpone.contracts._errors import DponeError
from dpone.contracts.identity import DigestValue, identity

PARENT_ID_PREFIX = "op_v1_"


def hex_of(rendered: str) -> str:
    """The hex digits of a rendered ``sha256:<hex>`` digest."""
    return rendered.removeprefix("sha256:")


def parent_operation_id(operation_namespace: str, parent_plan_digest: str) -> str:
    """``op_v1_`` + hex of H(operation_namespace, parent_plan_digest)."""
    digest = identity("journal.parent_operation", {
        "operation_namespace": DigestValue(operation_namespace),
        "parent_plan_digest": DigestValue(parent_plan_digest),
    })
    return PARENT_ID_PREFIX + hex_of(digest)


def child_operation_id(parent_id: str, ordinal: int) -> str:
    """The child's id: the parent id and the zero-padded four-digit ordinal."""
    if not 1 <= ordinal <= 9999:
        raise DponeError(code="journal.illegal_transition",
                         message=f"child ordinal {ordinal} is outside 1..9999")
    return f"{parent_id}_{ordinal:04d}"


def attempt_id(operation_namespace: str, operation_id: str, attempt_ordinal: int) -> str:
    """H(operation_namespace, operation_id, attempt_ordinal): the deterministic attempt id."""
    return identity("journal.attempt", {
        "operation_namespace": DigestValue(operation_namespace),
        "operation_id": operation_id,
        "attempt_ordinal": attempt_ordinal,
    })
