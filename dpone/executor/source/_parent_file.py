"""Open a frozen parent's IPC file for reading without copying it into memory."""

from __future__ import annotations

import mmap
from pathlib import Path

import pyarrow as pa
from pyarrow import ipc


def open_parent(path_or_bytes: Path | str | bytes | pa.Buffer) -> ipc.RecordBatchFileReader:
    """A random-access reader over a parent: memory-mapped for a path, zero-copy for bytes.

    Record batch ``i`` holds rows ``[i * 65536, (i + 1) * 65536)``; the reader's schema metadata
    carries the scope field, sort keys, boundary and mapping digest.
    """
    if isinstance(path_or_bytes, (bytes, pa.Buffer)):
        return ipc.open_file(pa.BufferReader(path_or_bytes))
    return ipc.open_file(pa.memory_map(str(path_or_bytes), "r"))


class MappedParent:
    """A parent's table, zero-copy over a read-only memory map of its IPC file.

    Reading rows faults their pages into the process's resident memory, where they stay: a
    reader that walks the whole parent would end up holding all of it. :meth:`release` drops
    the pages read so far from the resident set (they stay in the page cache and fault back in
    if read again), so a sealer that calls it after each child holds about one child's pages,
    whatever the size of the parent.
    """

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self.table: pa.Table = ipc.open_file(pa.BufferReader(pa.py_buffer(self._map))).read_all()
        self.release()  # the pages read for the batches' metadata

    def release(self) -> None:
        """Drop the mapped pages from this process's resident memory (not from the file)."""
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if advice is not None:
            self._map.madvise(advice)
