"""The MAY_ATTEMPT marker: its document, key and digest, and the check that it binds an attempt.

The journal plans the marker; the caller publishes ``marker_bytes`` create-if-absent and passes
``marker_digest`` to ``enter_submitting``, which refuses a marker that does not bind that exact
attempt.

The marker is a function of the journal state it is planned against (the child at its expected
revision, its parent, the journal epoch) and nothing else: its ``created_at`` is when the journal
committed that revision, the moment this attempt became the next one, never the time of
planning. A run refused entering SUBMITTING (an overlapping effect in flight, a lost lease)
leaves a SEALED or RETRY_WAIT child at the same revision (it leaves those states only into
SUBMITTING or a terminal state), so the next run plans the same attempt, publishes the identical
bytes and create-if-absent succeeds. An attempt that entered SUBMITTING moved the child to a new
revision and ordinal: its ordinal is never planned again. A marker planned in another journal
epoch differs in ``journal_epoch``, so the store refuses to replace it: it is restore
reconciliation work, never reused.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from dpone.contracts._base import canonical_json, content_digest
from dpone.contracts._errors import DponeError
from dpone.contracts.journal import (
    MAY_ATTEMPT_MARKER_SCHEMA_ID,
    AttemptPlan,
    may_attempt_marker_key,
)
from dpone.journal._ids import attempt_id
from dpone.journal._rows import ChildRow

MARKER_SCHEMA_ID = MAY_ATTEMPT_MARKER_SCHEMA_ID


def marker_key(operation_namespace: str, operation_id: str, attempt_ordinal: int) -> str:
    """``markers/<namespace hex>/<operation_id>/<attempt_ordinal>.json``."""
    return may_attempt_marker_key(operation_namespace, operation_id, attempt_ordinal)


def marker_document(
    *,
    operation_namespace: str,
    tenant_id: str,
    environment_id: str,
    parent_id: str,
    parent_plan_digest: str,
    operation_id: str,
    ordinal: int,
    delivery_key: str,
    receiver_mutation_key: str,
    mutation_intent_digest: str,
    generation_end: dt.datetime,
    correction_revision: int,
    attempt_ordinal: int,
    expected_revision: int,
    journal_epoch: int,
    created_at: dt.datetime,
) -> dict[str, Any]:
    """The immutable MAY_ATTEMPT marker; ``created_at`` is the database-clock time the journal
    committed ``expected_revision`` (deterministic for a re-planned, never-entered attempt)."""
    return {
        "schema": MARKER_SCHEMA_ID,
        "operation_namespace": operation_namespace,
        "tenant_id": tenant_id,
        "environment_id": environment_id,
        "parent_id": parent_id,
        "parent_plan_digest": parent_plan_digest,
        "operation_id": operation_id,
        "child_ordinal": ordinal,
        "delivery_key": delivery_key,
        "receiver_mutation_key": receiver_mutation_key,
        "mutation_intent_digest": mutation_intent_digest,
        "generation": {
            "scheduled_interval_end_utc": to_utc_text(generation_end),
            "correction_revision": correction_revision,
        },
        "attempt_ordinal": attempt_ordinal,
        "attempt_id": attempt_id(operation_namespace, operation_id, attempt_ordinal),
        "expected_journal_revision": expected_revision,
        "journal_epoch": journal_epoch,
        "created_at": to_utc_text(created_at),
    }


def marker_bytes(marker: Mapping[str, Any]) -> bytes:
    """The exact bytes a caller publishes for a marker (canonical JSON)."""
    return canonical_json(dict(marker))


def marker_digest(marker: Mapping[str, Any]) -> str:
    return content_digest(marker_bytes(marker))


def to_utc_text(moment: dt.datetime) -> str:
    if moment.tzinfo is None:
        raise DponeError(code="journal.illegal_transition",
                         message="journal timestamps must be timezone-aware")
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def check_binding(row: ChildRow, attempt: AttemptPlan, digest: str,
                  expected_revision: int) -> int:
    """The marker must be this attempt's, for this revision, and ``digest`` its exact bytes.

    Returns the journal epoch the marker was planned in.
    """
    namespace, operation_id = row.operation_namespace, row.operation_id
    if attempt.attempt_ordinal != row.attempt_ordinal + 1:
        raise DponeError(code="journal.revision_conflict", operation_id=operation_id,
                         message=f"attempt {attempt.attempt_ordinal} is not the next attempt")
    marker = attempt.marker
    expected = {
        "attempt_id": attempt_id(namespace, operation_id, attempt.attempt_ordinal),
        "operation_id": operation_id, "attempt_ordinal": attempt.attempt_ordinal,
        "expected_journal_revision": expected_revision,
        "mutation_intent_digest": row.mutation_intent_digest,
        "operation_namespace": namespace,
    }
    mismatched = sorted(key for key, value in expected.items() if marker.get(key) != value)
    if (mismatched or attempt.attempt_id != expected["attempt_id"]
            or attempt.marker_key != marker_key(namespace, operation_id, attempt.attempt_ordinal)):
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message="the MAY_ATTEMPT marker does not bind this attempt",
                         details={"mismatched": mismatched})
    if marker_digest(marker) != digest:
        raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                         message="the marker digest is not the digest of the marker document")
    return int(marker.get("journal_epoch", -1))
