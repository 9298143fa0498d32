"""File sources: locating the file under the registry root and pinning the bytes that were read."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import BinaryIO

from dpone.contracts import DponeError
from dpone.executor.source import _failures

_CHUNK = 1 << 20


def resolve(registry_root: Path, registry_path: str | None) -> Path:
    """The source file: a relative path that must stay inside the registry root."""
    if not registry_path:
        raise DponeError(code="input.invalid_argument",
                         message="a file source needs a registry path")
    root = registry_root.resolve()
    path = (root / registry_path).resolve()
    if not path.is_relative_to(root):
        raise DponeError(code="input.invalid_argument",
                         message="the source path leaves the registry root",
                         details={"registry_path": registry_path})
    if not path.is_file():
        raise _failures.unavailable("the source file does not exist or is not a file",
                                    registry_path=registry_path)
    return path


class PinnedFile:
    """The SHA-256 of a file's bytes, taken before reading and checked to still hold after.

    The file must not change while it is frozen: size, modification time and inode are compared
    after the read, and any change fails the freeze with ``source.unavailable``. The file is
    opened here (a missing or unreadable file fails at once); its bytes are hashed on a thread
    of their own while the caller parses them (hashlib releases the GIL), and :attr:`digest`
    waits for that hash.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            before = os.stat(path)
            handle = open(path, "rb")  # noqa: SIM115 - closed by the hashing thread
        except OSError as exc:
            raise _failures.unavailable("the source file cannot be read",
                                        errno=exc.errno) from None
        self._stamp = self._key(before)
        self._digest: str | None = None
        self._failure: DponeError | None = None
        self._hashing = threading.Thread(target=self._hash, args=(handle,), daemon=True,
                                         name="dpone-source-pin")
        self._hashing.start()

    def _hash(self, handle: BinaryIO) -> None:
        digest = hashlib.sha256()
        try:
            with handle:
                while chunk := handle.read(_CHUNK):
                    digest.update(chunk)
            after = os.stat(self.path)
        except OSError as exc:
            self._failure = _failures.unavailable("the source file cannot be read",
                                                  errno=exc.errno)
            return
        if self._key(after) != self._stamp:
            self._failure = self._changed()
            return
        self._digest = "sha256:" + digest.hexdigest()

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of the bytes pinned (raises when they could not be read whole)."""
        self._hashing.join()
        if self._failure is not None:
            raise self._failure
        if self._digest is None:
            raise self._changed()
        return self._digest

    @staticmethod
    def _key(stat: os.stat_result) -> tuple[int, int, int, int]:
        return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)

    @staticmethod
    def _changed() -> DponeError:
        return _failures.unavailable("the source file changed while it was being frozen")

    def check_unchanged(self) -> None:
        try:
            now = self._key(os.stat(self.path))
        except OSError:
            raise self._changed() from None
        if now != self._stamp:
            raise self._changed()
