"""Invoking `dpone` in-process with its state under one directory."""

from __future__ import annotations

import contextlib
import re
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from dpone.cli._output import wants_json
from dpone.cli.main import cli
from dpone.receiver import ReceiverThread
from support.cli_documents import published_document
from support.common import EXAMPLES

TOKEN = "tok-cli-sentinel-7Qz2-never-printed"
TOKEN_ENV = "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN"
FULL = ("2026-08-01", "2026-09-01")
ONE_ASYNC_CHILD = ("2026-08-01", "2026-08-04")  # the async example plans 3-day windows
TWO_ASYNC_CHILDREN = ("2026-08-01", "2026-08-07")


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        """The run's one JSON document, proven valid against its published schema."""
        return published_document(self.out)


@dataclass(frozen=True)
class Dpone:
    """``dpone`` with its state under ``state``; ``journal`` is a PostgreSQL URL or, by default,
    a SQLite file in ``state``."""

    registry: Path
    state: Path
    journal: str | None = None

    @property
    def journal_url(self) -> str:
        return self.journal or str(self.state / "journal.sqlite3")

    def __call__(self, *args: str) -> Run:
        """``dpone ARGS``; with ``--format json`` its stdout is checked to be one document valid
        against its published schema, whether or not the test reads it."""
        result = CliRunner().invoke(cli, list(args))
        run = Run(result.exit_code, result.stdout, result.stderr)
        if wants_json(args):
            run.json()
        return run

    def deliver(self, workload: str, interval: tuple[str, str] = FULL, *extra: str) -> Run:
        return self("deliver", str(self.registry / "workloads" / f"{workload}.yaml"),
                    "--registry", str(self.registry), "--interval-start", interval[0],
                    "--interval-end", interval[1], "--journal", self.journal_url,
                    "--artifacts", str(self.state / "artifacts"), "--plans", str(self.state),
                    *extra)

    def resume(self, operation_id: str, *extra: str) -> Run:
        return self("delivery", "resume", "--operation-id", operation_id,
                    "--journal", self.journal_url,
                    "--artifacts", str(self.state / "artifacts"), "--plans", str(self.state),
                    *extra)

    def inspect(self, operation_id: str, *extra: str) -> Run:
        return self("delivery", "inspect", "--operation-id", operation_id,
                    "--journal", self.journal_url, "--plans", str(self.state),
                    *extra)


def receiver_requests(receiver: ReceiverThread) -> dict[str, int]:
    """How many requests the mock receiver counted, by ``METHOD path``."""
    return dict(receiver.state.ledger.snapshot()["requests"])


def posts(receiver: ReceiverThread) -> int:
    """How many POST requests (submits) the mock receiver counted."""
    return sum(n for line, n in receiver_requests(receiver).items() if line.startswith("POST "))


def bind_registry(root: Path, authority: str) -> Path:
    """A copy of the example registry whose binding names ``authority``."""
    registry = root / "registry"
    shutil.copytree(EXAMPLES, registry)
    binding = registry / "bindings" / "mock_measurements.yaml"
    text = binding.read_text(encoding="utf-8")
    binding.write_text(re.sub(r"^authority: .*$", f"authority: {authority}", text, flags=re.M),
                       encoding="utf-8")
    return registry


@contextlib.contextmanager
def fresh_journal_url(dialect: str, path: Path, request: pytest.FixtureRequest,
                      prefix: str = "cli_") -> Iterator[str]:
    """A fresh, empty journal of ``dialect``: a SQLite file at ``path``, or a new schema of the
    session's PostgreSQL cluster (dropped afterwards)."""
    if dialect == "sqlite":
        yield str(path)
        return
    import psycopg  # noqa: PLC0415 - only the PostgreSQL variant needs the driver
    from psycopg import sql  # noqa: PLC0415

    admin_dsn = str(request.getfixturevalue("postgres_dsn"))
    schema = prefix + secrets.token_hex(6)
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    separator = "&" if "?" in admin_dsn else "?"
    try:
        yield f"{admin_dsn}{separator}options={quote(f'-c search_path={schema},public')}"
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
