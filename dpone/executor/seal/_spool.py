"""Spool files written behind the planner: hashing, writing and flushing off its thread.

The planner needs an interval's sizes at once and its digest only when the child is published.
So the oracle hands the sealed chunks of a measured interval to a :class:`SpoolWriter` and goes
on planning: a small pool hashes them, writes them to the interval's spool file and flushes it
to disk (the store that adopts the file then finds nothing left to flush), while the planner's
thread encodes the next interval. SHA-256, file writes and fsync release the GIL, so on two cores
the work overlaps. At most :data:`PENDING_SPOOLS` intervals wait or are being written at once:
their chunks (zero-copy slices of encoded row texts, or compressed bytes) are the only memory
held for them.

A spool's digest is a :class:`concurrent.futures.Future`: reading it waits for the write and
raises its error (``OSError``), so a spool that did not reach its file whole is never published.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

Buffer = bytes | memoryview
WRITER_THREADS = 2
"""Spools written at once: one per core of a small machine."""
PENDING_SPOOLS = 3
"""Spools queued or being written at most; the planner waits beyond that."""


def write_spool(path: Path, chunks: Sequence[Buffer], size: int) -> str:
    """Write ``chunks`` to the new file ``path`` and flush it to disk; their digest."""
    hasher = hashlib.sha256()
    written = 0
    with path.open("xb") as spool:
        for chunk in chunks:
            hasher.update(chunk)
            written += spool.write(chunk)
        spool.flush()
        os.fsync(spool.fileno())
    if written != size:
        raise OSError(f"the spool file {path} took {written} of {size} bytes")
    return "sha256:" + hasher.hexdigest()


class SpoolWriter:
    """Writes spool files on :data:`WRITER_THREADS` threads, :data:`PENDING_SPOOLS` at most."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=WRITER_THREADS,
                                        thread_name_prefix="dpone-spool")
        self._slots = threading.BoundedSemaphore(PENDING_SPOOLS)

    def write(self, path: Path, chunks: Sequence[Buffer], size: int) -> Future[str]:
        """Queue the spool file ``path`` (waits while :data:`PENDING_SPOOLS` are pending)."""
        self._slots.acquire()
        try:
            future = self._pool.submit(write_spool, path, chunks, size)
        except BaseException:
            self._slots.release()
            raise
        future.add_done_callback(lambda _: self._slots.release())
        return future

    def close(self) -> None:
        """Wait for every queued spool (their errors stay with their futures)."""
        self._pool.shutdown(wait=True)
