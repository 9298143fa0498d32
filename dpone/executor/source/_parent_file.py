"""Open a frozen parent's IPC file for reading without copying it into memory."""

from __future__ import annotations

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
