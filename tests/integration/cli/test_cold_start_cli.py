"""A read-only command starts light: a real `dpone delivery inspect` of a delivery in a SQLite
journal loads neither the compiler's YAML and schema libraries nor the grammar, Arrow or the
HTTP client; `dpone deliver` loads what its path needs but never the design contract's schema
validator (the state contract is loaded typed from its compiled JSON). Checked on the modules a
fresh interpreter holds when the command has finished, never on a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import FULL, ONE_ASYNC_CHILD, TOKEN, TOKEN_ENV, Dpone
from support.common import ROOT

LIBRARIES = ("ruamel", "yaml", "jsonschema", "lark", "pyarrow", "httpx", "psycopg", "boto3")


def _modules_after(*argv: str) -> tuple[int, set[str], set[str]]:
    """`dpone ARGV` in a fresh interpreter: its exit code, the libraries of :data:`LIBRARIES`
    and the dpone packages it had imported when it ended."""
    probe = (
        "import json, sys\n"
        "from dpone.cli.main import main\n"
        "code = 0\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    code = stop.code\n"
        "top = {name.split('.')[0] for name in sys.modules}\n"
        "dpone = {'.'.join(name.split('.')[:2]) for name in sys.modules if name.startswith('dpone.')}\n"
        f"print(json.dumps([code, sorted(top & set({LIBRARIES!r})), sorted(dpone)]), file=sys.stderr)\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), TOKEN_ENV: TOKEN},
                         check=False)
    code, libraries, packages = json.loads(ran.stderr.strip().splitlines()[-1])
    return code, set(libraries), set(packages)


@pytest.fixture
def dpone(registry: Path, tmp_path: Path) -> Dpone:
    return Dpone(registry, tmp_path / "state")  # a SQLite journal


def _inspect_args(dpone: Dpone, parent_id: str) -> list[str]:
    return ["delivery", "inspect", "--operation-id", parent_id, "--journal", dpone.journal_url,
            "--artifacts", str(dpone.state / "artifacts"), "--plans", str(dpone.state)]


def test_inspecting_a_delivery_loads_no_compiler_grammar_arrow_or_http_client(
        dpone: Dpone) -> None:
    delivered = dpone.deliver("measurements_sync", FULL, "--format", "json")
    assert delivered.code == 0, delivered.err

    code, libraries, packages = _modules_after(*_inspect_args(dpone, delivered.json()["parent_id"]))

    assert code == 0
    assert libraries == set()
    assert not packages & {"dpone.compiler", "dpone.grammar", "dpone.codecs"}


def test_inspecting_a_multipart_delivery_loads_no_compiler_grammar_arrow_or_http_client(
        dpone: Dpone) -> None:
    """The payload filename of a multipart body comes from the sealer's naming rules, which load
    nothing of the encoders (no Arrow, codecs or template grammar)."""
    delivered = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    assert delivered.code == 0, delivered.err

    code, libraries, packages = _modules_after(*_inspect_args(dpone, delivered.json()["parent_id"]),
                                               "--format", "json")

    assert code == 0
    assert libraries == set()
    assert not packages & {"dpone.compiler", "dpone.grammar", "dpone.codecs"}


def test_deliver_never_loads_the_design_contract_schema_validator(dpone: Dpone) -> None:
    code, libraries, packages = _modules_after(
        "deliver", str(dpone.registry / "workloads" / "measurements_sync.yaml"),
        "--registry", str(dpone.registry), "--interval-start", FULL[0], "--interval-end", FULL[1],
        "--journal", dpone.journal_url, "--artifacts", str(dpone.state / "artifacts"),
        "--plans", str(dpone.state))

    assert code == 0
    assert {"pyarrow", "httpx"} <= libraries  # what sealing and sending need
    assert "jsonschema" not in libraries
    assert "dpone.receiver" not in packages
