"""The executor image's dependency set in a fresh venv (built from the wheel, with the extras the
Containerfile installs), one moto S3 server, and a fresh PostgreSQL schema per test."""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from support.common import ROOT
from support.s3_server import moto_server

CONTAINERFILE = ROOT / "containers" / "executor" / "Containerfile"


def image_extras() -> str:
    """The extras the Containerfile's builder stage installs (``ARG DPONE_EXTRAS=...``)."""
    found = re.search(r"^ARG DPONE_EXTRAS=(\S+)$", CONTAINERFILE.read_text("utf-8"), re.M)
    if found is None:
        raise AssertionError(f"{CONTAINERFILE} declares no ARG DPONE_EXTRAS")
    return found.group(1)


def _run(*args: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


@pytest.fixture(scope="session")
def image_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding what the image's builder stage installs: the wheel and its extras."""
    work = tmp_path_factory.mktemp("executor-image")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work / "dist"),
         str(ROOT))
    wheels = list((work / "dist").glob("dpone-*.whl"))
    assert len(wheels) == 1, wheels
    venv = work / "venv"
    _run(sys.executable, "-m", "venv", str(venv))
    _run(str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", f"{wheels[0]}[{image_extras()}]")
    return venv


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with moto_server(tmp_path_factory.mktemp("moto") / "server.log") as url:
        yield url


@pytest.fixture
def journal_schema_url(postgres_dsn: str) -> Iterator[str]:
    """A fresh schema of the session's PostgreSQL cluster, as a journal URL (no password)."""
    import psycopg  # noqa: PLC0415
    from psycopg import sql  # noqa: PLC0415

    schema = "executor_" + secrets.token_hex(6)
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    separator = "&" if "?" in postgres_dsn else "?"
    try:
        yield f"{postgres_dsn}{separator}options={quote(f'-c search_path={schema},public')}"
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
