"""Credential shapes anywhere inside an authored string are refused, without echoing them.

The shapes a person pastes into a description or comment field: a whole header, a token after
``Bearer``/``Basic``/``Token``, a ``password=``/``api_key:`` assignment, a URL with a password,
cloud and vendor key formats. Text that only talks about credentials compiles.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from support.common import EXAMPLES

SECRETS = [
    "use header Authorization: Bearer 9f8e7d6c5b4a3f2e1d0c for the vendor API",
    "send Authorization: Token 0a1b2c3d4e5f6a7b",
    "the old Basic dXNlcjpwYXNzMTIz header is gone",
    "login as ops with password=Summer2026pw then upload",
    "api_key: 'AbC123dEf456gh'",
    "mirror of https://ops:s3cretPw9@vendor.example/api",
    "bucket keys AKIAIOSFODNN7EXAMPLE rotate monthly",
    "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtb2NrIn0 expired",
]
PROSE = [
    "Bearer tokens are resolved per process from the binding's credential_ref",
    "the token is read from the environment; password: see the vault",
    "Authorization: env:DPONE_CONN_MOCK_TOKEN names the reference, not the value",
    "Basic validation of rows happens before sealing",
    "documented at https://vendor.example/api/v2/jobs",
]


def _registry(tmp_path: Path, description: str) -> Path:
    registry = tmp_path / "registry"
    shutil.copytree(EXAMPLES, registry)
    workload = registry / "workloads" / "measurements_sync.yaml"
    lines = workload.read_text(encoding="utf-8").splitlines()
    escaped = description.replace("'", "''")
    lines = [f"description: '{escaped}'" if line.startswith("description:") else line
             for line in lines]
    workload.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return registry


@pytest.mark.parametrize("description", SECRETS)
def test_a_credential_inside_a_description_is_refused_without_echoing_it(
        tmp_path: Path, description: str) -> None:
    registry = _registry(tmp_path, description)

    with pytest.raises(DponeError) as refused:
        compile_workload(registry / "workloads" / "measurements_sync.yaml", registry)

    assert refused.value.code == "binding.secret_value"
    assert refused.value.location is not None and refused.value.location.path == "description"
    rendered = str(refused.value.document())
    for word in description.split():
        if any(ch.isdigit() for ch in word) and len(word) >= 8:
            assert word.strip("'") not in rendered


@pytest.mark.parametrize("description", PROSE)
def test_prose_about_credentials_compiles(tmp_path: Path, description: str) -> None:
    registry = _registry(tmp_path, description)

    compiled = compile_workload(registry / "workloads" / "measurements_sync.yaml", registry)

    assert compiled.digest.startswith("sha256:")
