"""A writer process for the local store's multi-process races (importable by spawned children)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import DponeError


def write_after_barrier(root: str, writes: list[tuple[str, bytes]], start: Any,
                        results: Any, index: int) -> None:
    """For each (key, data): wait until every writer is ready, then write once.

    Reports ``(index, [("ref", digest) | ("error", code), ...])`` on the results queue.
    """
    store = LocalArtifactStore(Path(root))
    outcomes: list[tuple[str, str]] = []
    for key, data in writes:
        start.wait()
        try:
            outcomes.append(("ref", store.put_bytes(key, data).digest))
        except DponeError as error:
            outcomes.append(("error", error.code))
    results.put((index, outcomes))
