"""The parent file's bytes are hashed and written on a thread of their own while the freeze
sorts the next rows: the digest and size are those of the file's bytes, and a write that failed
on that thread fails the freeze where the file is closed, never a later, silent truncation."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from dpone.executor.source import _parent_writer
from dpone.executor.source._parent_writer import _HashingFile


def test_the_digest_and_size_are_those_of_the_written_file(tmp_path: Path) -> None:
    path = tmp_path / "parent.arrow"
    handle = _HashingFile(path)
    chunks = [b"x" * 1000, memoryview(b"abc"), b"", bytes(range(256)) * 300]
    for chunk in chunks * 40:  # more than the pending bound: the writer waits, never drops
        assert handle.write(chunk) == len(chunk)
    handle.flush()
    handle.close()
    data = path.read_bytes()
    assert handle.size == len(data) == 40 * sum(len(chunk) for chunk in chunks)
    assert handle.hasher.hexdigest() == hashlib.sha256(data).hexdigest()


def test_a_write_that_failed_on_the_writing_thread_fails_the_close(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parent_writer, "_PENDING_WRITES", 1)
    handle = _HashingFile(tmp_path / "parent.arrow")

    class Full:
        def write(self, _data: bytes) -> int:
            raise OSError(28, "No space left on device")

        def flush(self) -> None: ...

        def close(self) -> None: ...

    handle._handle = Full()  # type: ignore[assignment]
    handle.write(b"rows")
    with pytest.raises(OSError, match="No space left on device"):
        for _ in range(3):  # a later write or the close raises it, whichever comes first
            handle.write(b"more rows")
        handle.close()
    with pytest.raises(OSError, match="No space left on device"):
        handle.close()  # failed stays failed
    assert handle.closed
