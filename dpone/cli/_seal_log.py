"""Saying when a boundary's source changed since its last seal (``dpone seal`` or ``dpone
deliver``): both record every seal (:func:`dpone.executor.seal.record_seal`) and compare."""

from __future__ import annotations

import click

from dpone.contracts.documents import SourceChange
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedTopology
from dpone.executor.seal import record_seal, seal_record_key


def changed_since_seal(store: ImmutableArtifactPort, topology: SealedTopology,
                       consequence: str) -> SourceChange | None:
    """Record this seal; when the last seal of the same plan and boundary froze other source
    bytes, warn on stderr (ending with ``consequence``) and return what differs (None when
    nothing did)."""
    previous = record_seal(store, topology)
    if previous is None:
        return None
    click.echo(f"warning: the source changed since the last seal of this plan and boundary: "
               f"the frozen parent {topology.parent_digest} ({topology.total_rows} rows) is not "
               f"{previous.parent_digest} ({previous.total_rows} rows) recorded in "
               f"{seal_record_key(previous)}; {consequence}", err=True)
    return SourceChange(sealed_parent_digest=previous.parent_digest,
                        sealed_rows=previous.total_rows, seal_record=seal_record_key(previous),
                        frozen_parent_digest=topology.parent_digest,
                        frozen_rows=topology.total_rows)
