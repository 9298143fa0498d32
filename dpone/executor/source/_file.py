"""File sources: locating the file under the registry root and pinning the bytes that were read."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

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
    after the read, and any change fails the freeze with ``source.unavailable``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            before = os.stat(path)
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                while chunk := handle.read(_CHUNK):
                    digest.update(chunk)
            after = os.stat(path)
        except OSError as exc:
            raise _failures.unavailable("the source file cannot be read",
                                        errno=exc.errno) from None
        self._stamp = self._key(before)
        if self._key(after) != self._stamp:
            raise self._changed()
        self.digest = "sha256:" + digest.hexdigest()

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
