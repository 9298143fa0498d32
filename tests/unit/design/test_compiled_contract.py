"""The compiled design contract: generated from the YAML, validated, loaded with the stdlib."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpone.compiler.design_contract import (
    COMPILED_CONTRACT_PATH,
    check_contract,
    check_shipped_contract,
    render_compiled_contract,
)
from dpone.contracts import DponeError
from dpone.contracts import design as design_module
from dpone.contracts.design import (
    COMPILED_CONTRACT_NAME,
    compiled_contract_bytes,
    load_state_contract,
)
from dpone.contracts.state import StateContract
from support.common import ROOT
from support.design import run_check


def test_compiled_contract_matches_the_yaml() -> None:
    assert COMPILED_CONTRACT_PATH.read_text("utf-8") == render_compiled_contract(), (
        f"{COMPILED_CONTRACT_PATH.name} drifted from the YAML contract: run "
        "scripts/generate_design_contract.py and review")
    assert compiled_contract_bytes() == COMPILED_CONTRACT_PATH.read_bytes()


def test_compiled_contract_is_the_yaml_document() -> None:
    assert json.loads(compiled_contract_bytes()) == check_shipped_contract().data


def test_compiled_contract_passes_every_check_of_the_validator() -> None:
    report = check_contract(compiled_contract_bytes(), COMPILED_CONTRACT_NAME)
    assert report.passed, [(c.id, c.findings) for c in report.checks if c.status != "PASS"]
    exit_code, text, stderr = run_check(COMPILED_CONTRACT_PATH, "text")
    assert exit_code == 0, stderr
    assert text.splitlines()[-1] == "PASS: 18/18 checks passed"


def test_runtime_contract_is_the_validated_yaml_contract() -> None:
    runtime = load_state_contract()
    source = StateContract.from_document(check_shipped_contract().data)
    assert dict(runtime.tuples) == dict(source.tuples)
    assert dict(runtime.transitions) == dict(source.transitions)
    assert (runtime.initial, runtime.terminal, runtime.forbidden, runtime.monotonic_fields,
            runtime.failure_mapping, runtime.continuation_kinds) == (
        source.initial, source.terminal, source.forbidden, source.monotonic_fields,
        source.failure_mapping, source.continuation_kinds)


def test_the_journal_loads_its_contract_without_the_compiler(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from dpone.journal.sqlite import SqliteJournal\n"
        "from dpone.journal.postgres import PostgresJournal\n"
        "journal = SqliteJournal(sys.argv[1], environment_id='dev')\n"
        "assert journal.contract.transitions\n"
        "loaded = sorted(m for m in sys.modules\n"
        "                if m.split('.')[0] in ('ruamel', 'jsonschema')\n"
        "                or m.startswith('dpone.compiler'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "journal.sqlite3")],
                         capture_output=True,
                         text=True, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_an_unreadable_compiled_contract_is_a_contract_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for raw in (b"{not json", b"[1, 2]"):
        monkeypatch.setattr(design_module, "compiled_contract_bytes", lambda raw=raw: raw)
        with pytest.raises(DponeError) as excinfo:
            load_state_contract.__wrapped__()
        assert excinfo.value.code == "contract.schema_invalid"
        assert excinfo.value.location is not None
        assert excinfo.value.location.file == COMPILED_CONTRACT_NAME
