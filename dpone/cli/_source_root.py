"""``--source-root``: where the executor reads a plan's file source.

A directory (a mounted volume) is used in place: the plan's ``registry_path`` resolves under it.
An ``s3://bucket/prefix`` URL (with the artifact store's ``?endpoint_url=...&region=...`` and
boto3's credential chain, e.g. ``AWS_ENDPOINT_URL``) names the object
``<prefix>/<registry_path>``: it is streamed into a private temporary directory under the
scratch directory (``$TMPDIR``; ``/scratch`` in the executor image), frozen from there like a
mounted file and removed when the run ends. A path that leaves the root (``..``) is refused
in both forms; a missing object is ``source.unavailable`` with its URL.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Final
from urllib.parse import urlsplit

from dpone.artifacts import open_artifact_store
from dpone.contracts import DponeError
from dpone.contracts.plan import RestDeliveryPlan

SOURCE_ROOT_VARIABLE: Final = "DPONE_SOURCE_ROOT"
S3_SCHEME: Final = "s3://"
_ROOT_HINT: Final = (f"Mount the source directory and pass --source-root DIR, or pass "
                     f"--source-root s3://bucket/prefix (or set ${SOURCE_ROOT_VARIABLE}).")


@contextlib.contextmanager
def source_root(plan: RestDeliveryPlan, given: Path | str | None) -> Iterator[Path]:
    """The local directory the plan's file source resolves under, for the duration of the run
    (a PostgreSQL source needs none: ``.``)."""
    if plan.source.type != "file":
        yield Path(".")
        return
    if given is None or str(given) == "":
        raise DponeError(code="input.invalid_argument",
                         message=f"the plan reads the file {plan.source.registry_path!r}: name "
                                 "the directory or s3:// prefix it resolves under with "
                                 "--source-root", hint=_ROOT_HINT)
    if isinstance(given, str) and given.startswith(S3_SCHEME):
        with _downloaded(given, plan.source.registry_path or "") as root:
            yield root
        return
    root = Path(given)
    if not root.is_dir():
        raise DponeError(code="source.unavailable",
                         message=f"--source-root {root} is not a directory",
                         details={"source_root": str(root)}, hint=_ROOT_HINT)
    yield root


def _shown(url: str, key: str) -> str:
    """``s3://bucket/prefix/key``: the object's URL without the query (endpoint, region)."""
    parts = urlsplit(url)
    prefix = parts.path.strip("/")
    return f"{S3_SCHEME}{parts.netloc}/{prefix + '/' if prefix else ''}{key}"


def _key(registry_path: str) -> str:
    """The plan's relative path as an object key under the prefix; one that leaves it is refused
    like the local resolver refuses a path that leaves its root."""
    path = PurePosixPath(registry_path)
    if not registry_path or path.is_absolute() or ".." in path.parts:
        raise DponeError(code="input.invalid_argument",
                         message="the source path leaves the source root",
                         details={"registry_path": registry_path})
    return str(path)


@contextlib.contextmanager
def _downloaded(url: str, registry_path: str) -> Iterator[Path]:
    key = _key(registry_path)
    shown = _shown(url, key)
    try:
        store = open_artifact_store(url)
    except DponeError as error:
        raise DponeError(code="input.invalid_argument",
                         message=f"--source-root is not a usable s3:// URL: {error.message}",
                         hint=_ROOT_HINT) from None
    with tempfile.TemporaryDirectory(prefix="dpone-source-") as scratch:
        target = Path(scratch) / key
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("xb") as handle:
                for chunk in store.open_stream(key):
                    handle.write(chunk)
        except DponeError as error:
            raise _unavailable(error, shown) from None
        except OSError as error:
            raise DponeError(code="filesystem.unavailable",
                             message=f"cannot write the source copy of {shown} under the "
                                     f"scratch directory: {error.strerror or type(error).__name__}",
                             details={"source": shown}) from None
        yield Path(scratch)


def _unavailable(error: DponeError, shown: str) -> DponeError:
    if error.code == "artifact.not_found":
        message = f"no source object {shown}"
    elif error.code == "artifact.invalid_key":
        return DponeError(code="input.invalid_argument",
                          message=f"the source path cannot be an S3 object key under the "
                                  f"prefix: {error.details.get('reason', error.message)}",
                          details={"source": shown})
    else:
        message = f"cannot read the source object {shown}: {error.message}"
    return DponeError(code="source.unavailable", message=message, details={"source": shown},
                      hint="Check that the object exists under the --source-root prefix and "
                           "that this process's S3 credentials may read it.")
