"""The built wheel works on its own: grammars, schemas and examples compile from a clean venv."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpone.contracts import canonical_json, content_digest
from support.common import EXAMPLES, GOLDEN_PLANS, ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def clean_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w",
                    str(work / "dist"), str(ROOT)], check=True, capture_output=True)
    wheels = list((work / "dist").glob("dpone-*.whl"))
    assert len(wheels) == 1
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", str(wheels[0])], check=True, capture_output=True)
    return work / "venv"


def test_wheel_ships_package_data_and_compiles_examples(clean_venv: Path, tmp_path: Path) -> None:
    dpone = clean_venv / "bin" / "dpone"
    out = subprocess.run(
        [str(dpone), "plan", str(EXAMPLES / "workloads" / "measurements_async.yaml"),
         "--registry", str(EXAMPLES), "--out", str(tmp_path), "--format", "json"],
        capture_output=True, text=True, cwd=tmp_path, check=False)
    assert out.returncode == 0, out.stderr
    golden = json.loads((GOLDEN_PLANS / "local-dev" / "measurements_async.json")
                        .read_text("utf-8"))
    assert json.loads(out.stdout)["plan_digest"] == content_digest(canonical_json(golden))
    installed = subprocess.run(
        [str(clean_venv / "bin" / "python"), "-c",
         "import importlib.resources as r; "
         "print(sorted(p.name for p in r.files('dpone.contracts').joinpath('schemas').iterdir()))"],
        capture_output=True, text=True, check=True)
    assert "dpone.rest_delivery_plan.v1.schema.json" in installed.stdout


def test_wheel_runs_the_design_contract_check(clean_venv: Path) -> None:
    out = subprocess.run([str(clean_venv / "bin" / "dpone"), "docs",
                          "check-rest-delivery-design-contract", "--format", "json"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert all(check["status"] == "PASS" for check in report["checks"])
