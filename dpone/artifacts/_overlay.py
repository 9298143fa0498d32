"""A store read through to another and written to a scratch store: what a command that must not
change a store it is named (`dpone preview --artifacts DIR`) seals into.

A key the named store holds is read from it, and a write of that key settles against it as the
named store itself would (the same bytes: nothing is written; other bytes:
``artifact.conflict``). Every other write goes to the scratch store, and :attr:`written` lists
it: a seal that wrote nothing found the whole sealed boundary in the named store.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from dpone.artifacts._common import hash_chunks, settle
from dpone.artifacts._local import LocalArtifactStore
from dpone.contracts.ports import ArtifactRef, ImmutableArtifactPort


class ReadThroughStore:
    """``base`` read, never written; what it lacks is written to ``scratch``."""

    def __init__(self, base: ImmutableArtifactPort, scratch: LocalArtifactStore) -> None:
        self._base = base
        self._scratch = scratch
        self._written: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def over(cls, base: ImmutableArtifactPort, scratch_dir: Path) -> ReadThroughStore:
        """``base`` read through, what it lacks written to a local store at ``scratch_dir``."""
        return cls(base, LocalArtifactStore(scratch_dir))

    def __repr__(self) -> str:
        return f"ReadThroughStore({self._base!r}, scratch={self._scratch!r})"

    @property
    def written(self) -> tuple[str, ...]:
        """The keys the named store lacked, written to the scratch store (sorted)."""
        with self._lock:
            return tuple(sorted(self._written))

    def _in_scratch(self, key: str) -> bool:
        with self._lock:
            return key in self._written

    def _missing(self, key: str) -> ArtifactRef | None:
        """The named store's ref of ``key``; None (and ``key`` noted as written) without one."""
        existing = self._base.stat(key)
        if existing is None:
            with self._lock:
                self._written.add(key)
        return existing

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef:
        return self.put_stream(key, (data,))

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        existing = None if self._in_scratch(key) else self._missing(key)
        if existing is None:
            return self._scratch.put_stream(key, chunks)
        digest, size = hash_chunks(chunks)
        return settle(ArtifactRef(key=key, digest=digest, size=size), existing.digest,
                      existing.size)

    def adopt_file(self, key: str, source: Path, digest: str, size: int) -> ArtifactRef:
        existing = None if self._in_scratch(key) else self._missing(key)
        if existing is None:
            return self._scratch.adopt_file(key, source, digest, size)
        return settle(ArtifactRef(key=key, digest=digest, size=size), existing.digest,
                      existing.size)

    def _holder(self, key: str) -> ImmutableArtifactPort:
        return self._scratch if self._in_scratch(key) else self._base

    def get_bytes(self, key: str) -> bytes:
        return self._holder(key).get_bytes(key)

    def open_stream(self, key: str, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        return self._holder(key).open_stream(key, chunk_size)

    def stat(self, key: str) -> ArtifactRef | None:
        return self._holder(key).stat(key)

    def local_file(self, key: str) -> Path | None:
        return self._holder(key).local_file(key)
