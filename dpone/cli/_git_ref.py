"""A registry as it was at a git ref, materialized read-only into a scratch directory.

`dpone plan diff --base REF` compiles the registry at ``REF`` against the working tree: ``git
archive`` exports the registry's directory at that commit (its workloads, profiles, bindings,
mappings, environments and file sources) without touching the working tree, the index or any
branch.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

from dpone.contracts import DponeError


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    git = shutil.which("git")
    if git is None:
        raise DponeError(code="input.invalid_argument",
                         message="--base needs git, which is not on PATH",
                         hint="Install git, or compare two plan files: `dpone plan diff OLD NEW`.")
    return subprocess.run([git, *args], cwd=cwd, capture_output=True, check=False)


def _top(registry: Path) -> Path:
    found = _git("rev-parse", "--show-toplevel", cwd=registry)
    if found.returncode != 0:
        raise DponeError(code="input.invalid_argument",
                         message=f"--base needs a git repository: {registry} is not in one",
                         hint="Run it inside the repository that holds the registry, or compare "
                              "two plan files: `dpone plan diff OLD NEW`.")
    return Path(found.stdout.decode().strip())


@contextlib.contextmanager
def registry_at(ref: str, registry: Path) -> Iterator[tuple[Path, Path]]:
    """``(the repository's top, the registry directory)`` as of ``ref``, in a scratch directory
    removed afterwards. A registry that did not exist at ``ref`` is a path that does not exist
    (every plan is then new)."""
    if ref.startswith("-"):
        raise DponeError(code="input.invalid_argument",
                         message=f"--base {ref!r} is not a git ref")
    top = _top(registry.resolve())
    relative = registry.resolve().relative_to(top).as_posix()
    commit = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=top)
    if commit.returncode != 0:
        raise DponeError(code="input.invalid_argument",
                         message=f"--base {ref!r} names no commit in {top}",
                         hint="Name a branch, tag or commit (fetch it first in a shallow CI "
                              "clone: `git fetch origin main`).")
    sha = commit.stdout.decode().strip()
    with tempfile.TemporaryDirectory(prefix="dpone-base-") as scratch:
        archive = _git("archive", "--format=tar", sha, "--", relative or ".", cwd=top)
        if archive.returncode == 0:
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(scratch, filter="data")
        elif b"did not match any files" not in archive.stderr:
            raise DponeError(code="input.invalid_argument",
                             message=f"git cannot export {relative or '.'} at {ref}: "
                                     f"{archive.stderr.decode(errors='replace').strip()}")
        yield Path(scratch), Path(scratch) / relative
