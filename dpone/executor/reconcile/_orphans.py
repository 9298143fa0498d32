"""The orphan MAY_ATTEMPT markers a reconciliation covers, found in the artifact store.

Every attempt of a child carries the same delivery key, so a reconciliation, which proves the
effect of the key, also covers each marker planned for an attempt that never entered SUBMITTING
in this journal: an orphan, at an ordinal above the journal's ``attempt_ordinal`` (a run lost
between publishing it and its SUBMITTING transaction, or an attempt a journal restore forgot).
:func:`find_orphans` probes ``attempt_ordinal + 1``, ``+ 2``, ... until a key is absent, and
checks that each marker binds this operation and delivery key; anything else at the child's
marker keys is refused (``reconcile.orphan_marker_foreign``) and nothing is recorded.

The query by key's absence proof counts its horizon from the latest of the last attempt's start
and the orphans' planning time (:func:`absence_time_base`). A marker's ``created_at`` is the
commit time of the revision it was planned against. For an orphan planned in the current journal
epoch that is a safe bound, and more: the journal holds no attempt row for it (it checks), so its
SUBMITTING transaction never committed and no request of it was ever sent. An orphan of another
epoch may be an attempt that a restored journal forgot, sent at any time after it was planned:
its ``created_at`` bounds nothing, so absence by key proves nothing while one exists
(:func:`untimed_absence`); the operator proves the effect with ``--receipt-id`` or ``--evidence``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from dpone.contracts import DponeError, content_digest
from dpone.contracts.journal import (
    MAY_ATTEMPT_MARKER_SCHEMA_ID,
    ChildOperation,
    OrphanMarker,
    may_attempt_marker_key,
)
from dpone.contracts.ports import ImmutableArtifactPort

MAX_MARKER_BYTES: Final = 16_384
"""A marker is a small canonical JSON document; anything larger is not one of ours."""


@dataclass(frozen=True)
class FoundOrphan:
    """One orphan marker: what the journal records, and what the absence proof reads."""

    marker: OrphanMarker
    journal_epoch: int
    planned_at: dt.datetime
    """The marker's ``created_at``: the commit time of the revision it was planned against."""


def find_orphans(store: ImmutableArtifactPort,
                 operation: ChildOperation) -> tuple[FoundOrphan, ...]:
    """The orphan markers of ``operation``, in ordinal order from ``attempt_ordinal + 1``."""
    found: list[FoundOrphan] = []
    ordinal = operation.attempt_ordinal + 1
    while True:
        key = may_attempt_marker_key(operation.tenancy.operation_namespace,
                                     operation.operation_id, ordinal)
        if store.stat(key) is None:
            return tuple(found)
        found.append(_bound(operation, key, ordinal, store.get_bytes(key)))
        ordinal += 1


def _bound(operation: ChildOperation, key: str, ordinal: int, data: bytes) -> FoundOrphan:
    """The marker at ``key``, checked to bind this operation, delivery key and ordinal."""
    expected: Mapping[str, object] = {
        "schema": MAY_ATTEMPT_MARKER_SCHEMA_ID, "operation_id": operation.operation_id,
        "operation_namespace": operation.tenancy.operation_namespace,
        "delivery_key": operation.delivery_key,
        "receiver_mutation_key": operation.receiver_mutation_key,
        "mutation_intent_digest": operation.mutation_intent_digest, "attempt_ordinal": ordinal}
    document: Any = None
    if len(data) <= MAX_MARKER_BYTES:
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            document = None
    if not isinstance(document, dict):
        raise _foreign(operation, key, ["<document>"])
    mismatched = sorted(name for name, value in expected.items() if document.get(name) != value)
    epoch, created = document.get("journal_epoch"), document.get("created_at")
    planned_at = _instant(created) if isinstance(created, str) else None
    if not isinstance(epoch, int) or isinstance(epoch, bool):
        mismatched.append("journal_epoch")
    if planned_at is None:
        mismatched.append("created_at")
    if mismatched or planned_at is None or not isinstance(epoch, int):
        raise _foreign(operation, key, mismatched)
    return FoundOrphan(
        marker=OrphanMarker(attempt_ordinal=ordinal, marker_key=key,
                            marker_digest=content_digest(data)),
        journal_epoch=epoch, planned_at=planned_at)


def _instant(text: str) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _foreign(operation: ChildOperation, key: str, mismatched: list[str]) -> DponeError:
    return DponeError(
        code="reconcile.orphan_marker_foreign", operation_id=operation.operation_id,
        message=f"{key} holds no MAY_ATTEMPT marker of child {operation.ordinal}'s delivery key "
        f"(mismatched: {', '.join(mismatched)}): the reconciliation cannot cover it; nothing "
        "was recorded", details={"marker_key": key, "mismatched": mismatched})


def absence_time_base(latest_attempt_at: dt.datetime,
                      orphans: Sequence[FoundOrphan]) -> dt.datetime:
    """What the query by key's absence horizon counts from: the latest of the last attempt's
    start and the orphans' planning time."""
    return max([latest_attempt_at, *(orphan.planned_at for orphan in orphans)])


def untimed_absence(orphans: Sequence[FoundOrphan], current_epoch: int) -> tuple[str, ...]:
    """The marker keys of orphans planned in another journal epoch: while one exists, absence
    by key proves nothing (see the module)."""
    return tuple(orphan.marker.marker_key for orphan in orphans
                 if orphan.journal_epoch != current_epoch)


def orphan_absence_unproven(operation: ChildOperation, marker_keys: Sequence[str],
                            evidence: Mapping[str, str | int]) -> DponeError:
    """The refusal of an absence proof while orphans of another journal epoch exist."""
    return DponeError(
        code="reconcile.absence_unproven", operation_id=operation.operation_id,
        message=f"the receiver holds nothing under child {operation.ordinal}'s key, but "
        f"{', '.join(marker_keys)} was planned in another journal epoch: a restored journal "
        "may have forgotten that it was sent, at a time nothing bounds, so absence proves "
        "nothing; the effect stays unknown and nothing was recorded. Prove it with "
        "--receipt-id R (a job you found in the receiver's console) or --evidence FILE (a "
        "dpone.operator_evidence.v1 document)",
        details={"reason": "orphan_of_another_epoch", "orphan_marker_keys": list(marker_keys),
                 **evidence})
