"""Orphan MAY_ATTEMPT markers covered by an operator reconciliation (shared by the reconcile
transaction).

An orphan is a marker of the child's delivery key at an ordinal above the journal's
``attempt_ordinal``: planned, never entered into SUBMITTING here (a run lost between publishing
it and its SUBMITTING transaction, or an attempt a journal restore forgot). Every attempt of a
child carries the same delivery key, so the reconciliation that proves the key's effect covers
it; consuming its ordinal keeps the next attempt from being planned under the orphan's key.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import Lease, OrphanMarker
from dpone.contracts.state import EvidenceName, Fact, StateContract
from dpone.journal._cas import apply_decision, guarded
from dpone.journal._ids import attempt_id
from dpone.journal._marker import marker_key
from dpone.journal._rows import ChildRow
from dpone.journal._unit import UnitOfWork


def consume_orphan_markers(tx: UnitOfWork, contract: StateContract, row: ChildRow,
                           orphans: Sequence[OrphanMarker], lease: Lease, *, lease_epoch: int,
                           epoch: int, actor: str, reconciliation_id: str) -> ChildRow:
    """Inside an operator reconciliation (``row`` is the opened, reconciling tuple): consume
    each orphan MAY_ATTEMPT marker the reconciliation covers, in order.

    The journal verifies what it is told: the orphans are exactly ``attempt_ordinal + 1, + 2,
    ...`` (contiguous), each under its attempt's marker key, and no attempt row exists for any
    of them (an attempt that entered SUBMITTING is never an orphan). Each is one contract
    transition (``*_orphan_consumed``, the marker digest as evidence) that advances
    ``attempt_ordinal``, and one attempt row with the marker key and digest; no remote-job slot
    is reserved for it.
    """
    operation_id, namespace = row.operation_id, row.operation_namespace
    for orphan in orphans:
        ordinal = row.attempt_ordinal + 1
        refusal = None
        if orphan.attempt_ordinal != ordinal:
            refusal = (f"orphan marker ordinal {orphan.attempt_ordinal} is not the next attempt "
                       f"ordinal {ordinal}: orphans are consumed contiguously from "
                       "attempt_ordinal + 1")
        elif orphan.marker_key != marker_key(namespace, operation_id, ordinal):
            refusal = f"{orphan.marker_key} is not the marker key of attempt {ordinal}"
        else:
            latest = tx.one("latest_attempt", operation_id=operation_id)
            if latest is not None and int(latest["attempt_ordinal"]) >= ordinal:
                refusal = (f"attempt {ordinal} has an attempt row: it entered SUBMITTING and "
                           "its marker is no orphan")
        if refusal is not None:
            raise DponeError(code="journal.illegal_transition", operation_id=operation_id,
                             message=refusal, details={"attempt_ordinal": orphan.attempt_ordinal,
                                                       "marker_key": orphan.marker_key})
        transition_id = _covering_transition(contract, row)
        decision = guarded(contract, row, transition_id, expected_revision=row.revision,
                           lease_kind="operator", lease_epoch=lease_epoch, current_epoch=epoch,
                           facts=(Fact.OPERATOR_AUTHORITY_AUDITED, Fact.ORPHAN_MARKER_FOUND),
                           reconciliation_id=reconciliation_id,
                           evidence_digest=orphan.marker_digest)
        tx.run("insert_attempt", attempt_id=attempt_id(namespace, operation_id, ordinal),
               operation_id=operation_id, attempt_ordinal=ordinal, marker_key=orphan.marker_key,
               marker_digest=orphan.marker_digest, expected_revision=row.revision,
               journal_epoch=epoch, lease_holder=lease.holder, lease_token=lease.token)
        tx.run("record_attempt_outcome", operation_id=operation_id, attempt_ordinal=ordinal,
               outcome=transition_id)
        row = apply_decision(tx, contract, row, decision, expected_revision=row.revision,
                             epoch=epoch, actor=actor, reconciliation_id=reconciliation_id,
                             evidence_digest=orphan.marker_digest)
    return row


def _covering_transition(contract: StateContract, row: ChildRow) -> str:
    for listed in contract.outgoing(row.state_name):
        if (not listed.automatic and listed.target == row.state_name
                and listed.trigger.evidence == EvidenceName.ORPHAN_MAY_ATTEMPT_MARKER_FOUND):
            return listed.id
    raise DponeError(code="journal.illegal_transition", operation_id=row.operation_id,
                     message=f"{row.state_name}: the state contract consumes no orphan marker "
                     "from it")
