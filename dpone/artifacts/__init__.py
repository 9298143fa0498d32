"""Artifact stores behind :class:`dpone.contracts.ports.ImmutableArtifactPort`.

``LocalArtifactStore`` (a directory; the embedded default) and ``S3ArtifactStore`` (S3 or an
S3-compatible endpoint, the ``s3`` extra) both write create-if-absent and digest-verified: the
same bytes under an existing key are a no-op returning the same ref, other bytes raise
``artifact.conflict`` and nothing is overwritten. Composition roots build a store from a URL
with ``open_artifact_store``. ``ReadThroughStore`` reads one store and writes only what it lacks,
to a scratch store: for a command that must leave the store it is named unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpone.artifacts._local import LocalArtifactStore
from dpone.artifacts._overlay import ReadThroughStore
from dpone.artifacts._s3 import S3ArtifactStore
from dpone.artifacts._url import open_artifact_store, open_prunable_artifact_store

if TYPE_CHECKING:
    from pathlib import Path

    from dpone.contracts.ports import ImmutableArtifactPort, PrunableArtifactPort

    # Conformance is proved by the type checker, not by name sets.
    _local: ImmutableArtifactPort = LocalArtifactStore(Path())
    _read_through: ImmutableArtifactPort = ReadThroughStore(_local, LocalArtifactStore(Path()))
    _s3: ImmutableArtifactPort = S3ArtifactStore("bucket")
    _local_prunable: PrunableArtifactPort = LocalArtifactStore(Path())
    _s3_prunable: PrunableArtifactPort = S3ArtifactStore("bucket")

__all__ = ["LocalArtifactStore", "ReadThroughStore", "S3ArtifactStore", "open_artifact_store",
           "open_prunable_artifact_store"]
