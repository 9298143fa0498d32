"""The embedded default artifact store: one directory on a local filesystem.

An artifact with key ``a/b/c.json`` is the file ``<root>/a/b/c.json``. A write streams into a
temporary file in the target directory while hashing, fsyncs it, and publishes it with
``os.link``, which creates the name only if it is absent, atomically, across threads and
processes; the directory is then fsynced. Temporary names contain ``~``, which no key can, so a
partial write is never visible as an artifact.

A file that the caller wrote and hashed itself can be published without a second copy or hash
(:meth:`LocalArtifactStore.adopt_file`): it is fsynced, made read-only and linked to its key,
create-if-absent in the same way.

Because a name cannot be a file and a directory at once, a key that is a proper prefix of
another key (``a/b`` next to ``a/b/c``) is refused here with ``artifact.conflict``.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from dpone.artifacts._common import (
    ChunkReader,
    check_chunk_size,
    hash_chunks,
    not_found,
    render_digest,
    settle,
    unavailable,
    validate_key,
)
from dpone.contracts import DponeError
from dpone.contracts.ports import ArtifactRef

_TMP_PREFIX = ".~dpone-"
_TMP_SUFFIX = ".partial"
_FILE_MODE = 0o440  # artifacts are immutable: read-only for owner and group
_ABSENT = (FileNotFoundError, NotADirectoryError, IsADirectoryError)
_HASH_CHUNK = 1 << 20


class LocalArtifactStore:
    """Create-if-absent, digest-verified artifacts under ``root`` (created on first write)."""

    def __init__(self, root: Path | str) -> None:
        self._root = Path(root).absolute()

    @property
    def root(self) -> Path:
        return self._root

    def __repr__(self) -> str:
        return f"LocalArtifactStore({str(self._root)!r})"

    # -- writes ---------------------------------------------------------------------------------

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef:
        return self.put_stream(key, (data,))

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        path = self._path(key)
        try:
            if os.path.lexists(path):
                # Already published: hash the offered bytes without writing them.
                digest, size = hash_chunks(chunks)
                return self._settle_existing(ArtifactRef(key=key, digest=digest, size=size), path)
            self._ensure_directory(path.parent, key)
            return self._write_new(key, path, chunks)
        except OSError as exc:
            where = str(exc.filename if exc.filename is not None else path)
            raise unavailable(f"writing artifact {key!r} under {self._root} failed: {where}: "
                              f"{exc.strerror or type(exc).__name__}", key, path=where) from exc

    def _write_new(self, key: str, path: Path, chunks: Iterable[bytes]) -> ArtifactRef:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX)
        try:
            hasher = hashlib.sha256()
            size = 0
            with os.fdopen(fd, "wb") as handle:
                for chunk in chunks:
                    hasher.update(chunk)
                    handle.write(chunk)
                    size += len(chunk)
                handle.flush()
                os.fchmod(handle.fileno(), _FILE_MODE)
                os.fsync(handle.fileno())
            ref = ArtifactRef(key=key, digest=render_digest(hasher.hexdigest()), size=size)
            try:
                os.link(tmp, path)  # atomic create-if-absent; never replaces an existing name
            except FileExistsError:
                return self._settle_existing(ref, path)
            _fsync_directory(path.parent)
            return ref
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def adopt_file(self, key: str, source: Path, digest: str, size: int) -> ArtifactRef:
        """Publish the file ``source`` under ``key`` as it is, without copying or hashing it.

        ``digest`` and ``size`` are those of the file's bytes, computed by the caller while it
        wrote them; the caller never writes the file again. The file is fsynced, made read-only
        and hard-linked to the key (create-if-absent); a key that exists settles as
        :meth:`put_stream` does (same bytes: a no-op; other bytes: ``artifact.conflict``). A file
        on another filesystem than the store is copied in with :meth:`put_stream` instead.
        """
        path = self._path(key)
        try:
            with open(source, "rb") as handle:
                if os.fstat(handle.fileno()).st_size != size:
                    raise unavailable(f"the file offered for artifact {key!r} is not {size} "
                                      "bytes long", key, path=str(source))
                os.fchmod(handle.fileno(), _FILE_MODE)
                os.fsync(handle.fileno())
            ref = ArtifactRef(key=key, digest=digest, size=size)
            if os.path.lexists(path):
                return self._settle_existing(ref, path)
            self._ensure_directory(path.parent, key)
            try:
                os.link(source, path)  # atomic create-if-absent; never replaces an existing name
            except FileExistsError:
                return self._settle_existing(ref, path)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP):
                    raise
                with open(source, "rb") as copy:  # another filesystem: copy and hash it
                    return self._write_new(key, path, iter(lambda: copy.read(_HASH_CHUNK), b""))
            _fsync_directory(path.parent)
            return ref
        except OSError as exc:
            where = str(exc.filename if exc.filename is not None else path)
            raise unavailable(f"publishing artifact {key!r} under {self._root} failed: {where}: "
                              f"{exc.strerror or type(exc).__name__}", key, path=where) from exc

    def _settle_existing(self, ref: ArtifactRef, path: Path) -> ArtifactRef:
        existing = self._file_digest(path)
        if existing is None:  # the name is a directory: other artifacts live below this key
            raise DponeError(
                code="artifact.conflict",
                message=f"artifact {ref.key!r} cannot be created: other artifacts live below it, "
                        "and the local store cannot hold a key above another key",
                details={"key": ref.key, "offered_digest": ref.digest})
        return settle(ref, *existing)

    def _ensure_directory(self, directory: Path, key: str) -> None:
        """Create the missing directories of ``directory`` below the root, each one's entry
        synced in its parent; the ones that exist are only looked at, never created again."""
        if directory.is_dir():
            return
        missing: list[Path] = []
        current = directory
        while current != self._root and not current.is_dir():
            if os.path.lexists(current):
                if current.is_dir():  # created meanwhile by another writer
                    break
                raise _prefix_conflict(key, current.relative_to(self._root))  # a file there
            missing.append(current)
            current = current.parent
        if current == self._root and not self._root.is_dir():
            self._root.mkdir(parents=True, exist_ok=True)
        for current in reversed(missing):
            try:
                os.mkdir(current)
            except FileExistsError:  # created meanwhile by another writer
                if not current.is_dir():
                    raise _prefix_conflict(key, current.relative_to(self._root)) from None
                continue
            except NotADirectoryError:
                raise _prefix_conflict(key, current.parent.relative_to(self._root)) from None
            _fsync_directory(current.parent)

    # -- retention ------------------------------------------------------------------------------

    def expire(self, key: str) -> bool:
        """Delete the artifact ``key`` (payload retention only: ``ArtifactExpiryPort``); True
        when it existed. The directory is fsynced so the deletion is durable; emptied
        directories stay (a later write of the same key reuses them)."""
        path = self._path(key)
        try:
            if not path.is_file():
                return False
            os.unlink(path)
            _fsync_directory(path.parent)
        except FileNotFoundError:
            return False  # deleted meanwhile by another prune
        except OSError as exc:
            raise unavailable(f"deleting artifact {key!r} at {path} failed: {exc.strerror}", key,
                              path=str(path)) from exc
        return True

    # -- reads ----------------------------------------------------------------------------------

    def get_bytes(self, key: str) -> bytes:
        with self._open(key) as handle:
            try:
                return handle.read()
            except OSError as exc:
                raise unavailable(f"reading artifact {key!r} failed: {exc.strerror}", key,
                                  path=str(self._path(key))) from exc

    def open_stream(self, key: str, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        check_chunk_size(chunk_size)
        handle = self._open(key)
        return ChunkReader(handle.read, handle.close, chunk_size, key=key, read_errors=(OSError,))

    def stat(self, key: str) -> ArtifactRef | None:
        path = self._path(key)
        try:
            existing = self._file_digest(path)
        except OSError as exc:
            raise unavailable(f"reading artifact {key!r} at {path} failed: {exc.strerror}", key,
                              path=str(path)) from exc
        if existing is None:
            return None
        digest, size = existing
        return ArtifactRef(key=key, digest=digest, size=size)

    def local_file(self, key: str) -> Path | None:
        """The artifact's own file under the root (None when there is none)."""
        path = self._path(key)
        return path if path.is_file() else None

    def _open(self, key: str) -> BinaryIO:
        path = self._path(key)
        try:
            return open(path, "rb")  # the caller owns and closes the handle
        except _ABSENT:
            raise not_found(key, str(self._root)) from None
        except OSError as exc:
            raise unavailable(f"opening artifact {key!r} at {path} failed: {exc.strerror}", key,
                              path=str(path)) from exc

    @staticmethod
    def _file_digest(path: Path) -> tuple[str, int] | None:
        """Digest and size of the file at ``path``, read now; None if it is not a file."""
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed just below
        except _ABSENT:
            return None
        with handle:
            return hash_chunks(iter(lambda: handle.read(_HASH_CHUNK), b""))

    def _path(self, key: str) -> Path:
        return self._root.joinpath(*validate_key(key).split("/"))


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _prefix_conflict(key: str, occupied: Path) -> DponeError:
    return DponeError(
        code="artifact.conflict",
        message=f"artifact {key!r} cannot be created: {occupied.as_posix()!r} is itself an "
                "artifact, and the local store cannot hold a key below another key",
        details={"key": key, "existing_key": occupied.as_posix()},
    )
