"""Capability ports (typing.Protocol): the runtime sees storage and I/O only through these."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

from dpone.contracts._base import Digest, StrictModel


class ArtifactRef(StrictModel):
    """Where an immutable artifact lives and what its bytes hash to."""

    key: str
    digest: Digest
    size: int


class ImmutableArtifactPort(Protocol):
    """Create-if-absent, digest-verified object storage.

    Writing a key that exists with the same bytes is a no-op returning the same ref; with other
    bytes it raises ``DponeError(code="artifact.conflict")`` and never overwrites. Reads verify
    nothing by themselves: callers compare ``ArtifactRef.digest`` when they need to.
    """

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef: ...

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef: ...

    def get_bytes(self, key: str) -> bytes: ...

    def open_stream(self, key: str, chunk_size: int = 1 << 20) -> Iterator[bytes]: ...

    def stat(self, key: str) -> ArtifactRef | None: ...

    def local_file(self, key: str) -> Path | None:
        """A file on this machine that holds the artifact's bytes, to be read in place (never
        written), when the store keeps its artifacts as local files; None otherwise, and the
        caller reads :meth:`open_stream`."""
        ...
