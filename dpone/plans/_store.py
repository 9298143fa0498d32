"""Plan files: canonical JSON named by its own digest, written create-if-absent."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from dpone.contracts import DponeError, Location, content_digest
from dpone.contracts.ports import ArtifactRef, ImmutableArtifactPort


def plan_path(root: Path, digest: str) -> Path:
    return root / "plans" / "sha256" / f"{digest.removeprefix('sha256:')}.json"


def write_plan(root: Path, digest: str, canonical: bytes) -> tuple[Path, bool]:
    """Write ``canonical`` under its digest; returns (path, written). Never overwrites.

    A plan store that cannot be created or written (a path below a file, a read-only or full
    filesystem) is ``output.unwritable`` naming the path, never an OSError.
    """
    if content_digest(canonical) != digest:
        raise DponeError(code="plan.digest_mismatch", message="plan bytes do not match the digest")
    path = plan_path(root, digest)
    try:
        return _write_new(path, canonical)
    except OSError as exc:
        where = exc.filename if exc.filename is not None else path
        raise DponeError(code="output.unwritable",
                         message=f"cannot write the plan under {root}: {where}: "
                                 f"{exc.strerror or type(exc).__name__}",
                         location=Location(file=str(path)),
                         details={"path": str(where), "plan_store": str(root)}) from exc


def _write_new(path: Path, canonical: bytes) -> tuple[Path, bool]:
    if path.exists():
        if path.read_bytes() != canonical:
            raise DponeError(code="plan.digest_mismatch",
                             message=f"{path} exists with other bytes; it was altered",
                             location=Location(file=str(path)))
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(canonical)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, path)  # fails if the name appeared meanwhile: create-if-absent
    except FileExistsError:
        if path.read_bytes() != canonical:
            raise DponeError(code="plan.digest_mismatch", message=f"{path} exists with other "
                             "bytes", location=Location(file=str(path))) from None
        return path, False
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path, True


def read_plan_bytes(root: Path, digest: str) -> bytes:
    """The canonical bytes of the plan ``digest`` under ``root``, verified against the name."""
    path = plan_path(root, digest)
    if not path.is_file():
        raise DponeError(code="plan.not_found", message=f"no plan {digest} under {root}",
                         location=Location(file=str(path)))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DponeError(code="filesystem.unavailable",
                         message=f"cannot read the plan {path}: "
                                 f"{exc.strerror or type(exc).__name__}",
                         location=Location(file=str(path)), details={"path": str(path)}) from exc
    if content_digest(data) != digest:
        raise DponeError(code="plan.digest_mismatch", message=f"{path} does not hash to its name",
                         location=Location(file=str(path)))
    return data


def read_plan(root: Path, digest: str) -> dict[str, Any]:
    """Read a plan by digest and verify its bytes against the name."""
    document: dict[str, Any] = json.loads(read_plan_bytes(root, digest))
    return document


def plan_key(digest: str) -> str:
    """The artifact key a plan is published under: ``plans/sha256/<hex>.json``."""
    return f"plans/sha256/{digest.removeprefix('sha256:')}.json"


def publish_plan(store: ImmutableArtifactPort, digest: str, canonical: bytes) -> ArtifactRef:
    """Publish a plan into the artifact store, create-if-absent under its content address.

    The same bytes already there are a no-op; other bytes under that key (an altered plan) are
    ``plan.digest_mismatch`` and nothing is overwritten.
    """
    if content_digest(canonical) != digest:
        raise DponeError(code="plan.digest_mismatch", message="plan bytes do not match the digest")
    key = plan_key(digest)
    try:
        return store.put_bytes(key, canonical)
    except DponeError as error:
        if error.code != "artifact.conflict":
            raise
        raise DponeError(code="plan.digest_mismatch",
                         message=f"the artifact store holds other bytes under {key} than the "
                                 f"plan {digest}: the published plan was altered",
                         details={"key": key, "plan_digest": digest}) from error


def read_published_plan_bytes(store: ImmutableArtifactPort, digest: str) -> bytes:
    """The canonical bytes of the plan ``digest`` published in the artifact store, verified
    against its digest: ``plan.not_found`` when it was never published, ``plan.digest_mismatch``
    when altered."""
    key = plan_key(digest)
    try:
        data = store.get_bytes(key)
    except DponeError as error:
        if error.code != "artifact.not_found":
            raise
        raise DponeError(code="plan.not_found",
                         message=f"no plan {digest} published in the artifact store ({key})",
                         details={"key": key}) from error
    if content_digest(data) != digest:
        raise DponeError(code="plan.digest_mismatch",
                         message=f"the published plan {key} does not hash to its name: it was "
                                 "altered", details={"key": key, "plan_digest": digest})
    return data


def read_published_plan(store: ImmutableArtifactPort, digest: str) -> dict[str, Any]:
    """:func:`read_published_plan_bytes` parsed."""
    document: dict[str, Any] = json.loads(read_published_plan_bytes(store, digest))
    return document
