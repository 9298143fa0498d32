"""The seal log: which frozen parent the last seal of a plan and boundary produced.

Every seal appends a ``dpone.seal_record.v1`` under
``seals/sha256/<plan hex>/<from>_<to>/<sequence>.json`` (create-if-absent, sequences 1, 2, ...
without gaps) unless the last record already names the same parent. A seal whose frozen parent
differs from the last record's is a source that changed between two seals of one boundary: the
caller says so (it is never silent), the artifacts stay immutable.
"""

from __future__ import annotations

from typing import Final

from dpone.contracts import DponeError
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SEAL_RECORD_KEY_PREFIX, SealedTopology, SealRecord

_MAX_RACES: Final = 8


def seal_record_key(record: SealRecord) -> str:
    """The artifact key of ``record``."""
    return _key(record.plan_digest, record.boundary_from.isoformat(),
                record.boundary_to.isoformat(), record.sequence)


def _key(plan_digest: str, boundary_from: str, boundary_to: str, sequence: int) -> str:
    plan = plan_digest.removeprefix("sha256:")
    return f"{SEAL_RECORD_KEY_PREFIX}{plan}/{boundary_from}_{boundary_to}/{sequence:06d}.json"


def last_seal(artifacts: ImmutableArtifactPort, topology: SealedTopology) -> SealRecord | None:
    """The last recorded seal of ``topology``'s plan and boundary (None before the first)."""
    coverage = topology.coverage
    where = (topology.plan_digest, coverage.boundary_from.isoformat(),
             coverage.boundary_to.isoformat())
    if artifacts.stat(_key(*where, 1)) is None:
        return None
    present, absent = 1, 2  # galloping, then bisection: O(log n) stats for n records
    while artifacts.stat(_key(*where, absent)) is not None:
        present, absent = absent, absent * 2
    while absent - present > 1:
        middle = (present + absent) // 2
        if artifacts.stat(_key(*where, middle)) is None:
            absent = middle
        else:
            present = middle
    return SealRecord.model_validate_json(artifacts.get_bytes(_key(*where, present)))


def record_seal(artifacts: ImmutableArtifactPort, topology: SealedTopology) -> SealRecord | None:
    """Record ``topology`` as the last seal of its plan and boundary.

    Returns the previous last seal when it froze another parent (the source changed since),
    None when there was none or it froze the same parent.
    """
    previous = last_seal(artifacts, topology)
    if previous is not None and previous.parent_digest == topology.parent_digest:
        return None
    sequence = previous.sequence + 1 if previous is not None else 1
    for _ in range(_MAX_RACES):
        record = SealRecord(sequence=sequence, plan_digest=topology.plan_digest,
                            boundary_from=topology.coverage.boundary_from,
                            boundary_to=topology.coverage.boundary_to,
                            parent_digest=topology.parent_digest,
                            parent_plan_digest=topology.parent_plan_digest,
                            total_rows=topology.total_rows, child_count=len(topology.children))
        try:
            artifacts.put_bytes(seal_record_key(record), record.canonical_bytes())
            break
        except DponeError as error:
            if error.code != "artifact.conflict":
                raise
            sequence += 1  # a concurrent seal of other bytes took this sequence first
    return previous
