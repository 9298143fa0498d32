"""The sealer's view of a parent: zero-copy over a memory map, its pages released on demand."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import ipc

from dpone.executor.source import MappedParent

MB = 1 << 20


def _resident_file_bytes() -> int:
    """This process's resident file-backed pages (``RssFile``), in bytes."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("RssFile:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no RssFile line in /proc/self/status")


def test_reading_the_whole_parent_then_releasing_leaves_its_pages_out_of_memory(
        tmp_path: Path) -> None:
    """Walking a 48 MB parent faults its pages in; release() drops them from the resident set
    and the rows still read back the same (the pages come back from the file)."""
    path = tmp_path / "parent.arrow"
    values = pa.array(range(6 * MB), pa.int64())
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, pa.schema([("v", pa.int64())])) as w:
        for start in range(0, len(values), 65_536):
            w.write_batch(pa.record_batch([values.slice(start, 65_536)], names=["v"]))
    parent = MappedParent(path)
    before = _resident_file_bytes()
    total = pc.sum(parent.table.column("v")).as_py()
    walked = _resident_file_bytes()
    parent.release()
    released = _resident_file_bytes()
    assert walked - before > 40 * MB
    assert walked - released > 40 * MB
    assert pc.sum(parent.table.column("v")).as_py() == total == (6 * MB) * (6 * MB - 1) // 2
