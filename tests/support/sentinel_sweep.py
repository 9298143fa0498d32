"""The whole-run sentinel search: no test secret may appear in any test's output or in any
state a test run leaves behind.

Every credential the tests hand to dpone is a searchable sentinel (the receiver tokens of
``support.delivery`` and ``support.cli``, the transport unit tests' value, the PostgreSQL source
password, the Vault token, Kubernetes service-account JWT and the tokens the fake Vault issues):
:data:`SENTINEL` matches them all. The sweep looks at:

* the captured stdout/stderr/log and the failure report of every test (:func:`check_report`);
* at the end of the run, every file under the run's temporary directory (journals, artifact
  stores, plans, logs, scratch) and ``test_artifacts/`` (:func:`scan_tree`), except the
  credential sources the tests wrote on purpose (:func:`credential_source`);
* every PostgreSQL data directory the tests started, data files and WAL, before it is removed
  (``support.postgres_cluster``): the journals and sources that lived there.

Hits are collected here; the root ``conftest`` fails the run on any and writes the summary to
``test_artifacts/sentinel_sweep.json``. Under pytest-xdist the controller searches every test
report (it receives each worker's, with the captured output) and the run's whole temporary
directory (the workers' directories are below it); each worker hands over what it searched
itself, the PostgreSQL clusters it started (:meth:`Sweep.handover`, :meth:`Sweep.merge`).
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

SENTINEL: Final = re.compile(
    rb"dpone-sentinel-|tok-cli-sentinel-|pg-sentinel-|s3ntinel-VALUE-|hvs\.vault-sentinel-"
    rb"|eyJk8s-jwt-sentinel-|hvs\.k8s-issued-sentinel-")
_CREDENTIAL_NAME: Final = re.compile(r"token|secret|dsn|password|passwd|credential|cred|\.pem$"
                                     r"|\.key$", re.IGNORECASE)
_BARE_VALUE: Final = re.compile(rb"\s*[\w.:@/+=~-]+\s*")
_MAX_VALUE_FILE: Final = 4096


@dataclass
class Sweep:
    """What the run searched and found."""

    reports: int = 0
    files: int = 0
    bytes: int = 0
    hits: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def found(self, where: str, match: bytes) -> None:
        with self.lock:
            self.hits.append(f"{where}: {match.decode(errors='replace')}...")

    def handover(self) -> dict[str, object]:
        """What a pytest-xdist worker searched, for the controller (plain JSON values)."""
        with self.lock:
            return {"reports": self.reports, "files": self.files, "bytes": self.bytes,
                    "hits": list(self.hits)}

    def merge(self, worker: str, handed: object) -> None:
        """Add a worker's :meth:`handover`; a worker that handed nothing (it crashed) is a hit:
        what it searched is unknown, so the run fails closed."""
        if not isinstance(handed, dict):
            with self.lock:
                self.hits.append(f"{worker}: the worker ended without handing over its search")
            return
        with self.lock:
            self.reports += int(handed["reports"])
            self.files += int(handed["files"])
            self.bytes += int(handed["bytes"])
            self.hits.extend(str(hit) for hit in handed["hits"])


SWEEP: Final = Sweep()


def check_report(nodeid: str, sections: list[tuple[str, str]], longrepr: str,
                 sweep: Sweep = SWEEP) -> None:
    """Search one test's captured output and failure report."""
    sweep.reports += 1
    for name, text in [*sections, ("report", longrepr)]:
        match = SENTINEL.search(text.encode("utf-8", "replace"))
        if match:
            sweep.found(f"{nodeid} ({name})", match.group(0))


def credential_source(path: Path, data: bytes) -> bool:
    """A file a test wrote as a credential's source (``file:`` refs, token and DSN files, PEM
    keys): named so, or holding one bare value and nothing else."""
    return bool(_CREDENTIAL_NAME.search(path.name)) or (
        len(data) <= _MAX_VALUE_FILE and _BARE_VALUE.fullmatch(data) is not None)


def scan_tree(root: Path, label: str, sweep: Sweep = SWEEP) -> None:
    """Search every regular file under ``root`` (symbolic links are not followed)."""
    for directory, _dirs, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                data = path.read_bytes()
            except OSError:
                continue  # removed while the run ended
            sweep.files += 1
            sweep.bytes += len(data)
            match = SENTINEL.search(data)
            if match and not credential_source(path, data):
                sweep.found(f"{label}/{path.relative_to(root)}", match.group(0))
