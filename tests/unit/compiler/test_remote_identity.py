"""The binding's remote identity: an evidence reference, immutable in production, and a mode
the binding can back (``dpone.compiler._remote_identity``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.compiler._remote_identity import check_remote_identity
from dpone.compiler._validate import validate_document
from dpone.compiler._yaml import load_yaml_file
from dpone.contracts import DponeError
from dpone.contracts.binding import ConnectionBinding, Environment
from support.common import EXAMPLES

BINDING = EXAMPLES / "bindings" / "mock_measurements.yaml"
EXAMPLE_REF = "evidence://local-dev/mock-receiver/attestation-1"
DIGEST_REF = "evidence://platform/whoami/sha256:" + "ab" * 32


def _environment(tier: str) -> Environment:
    return Environment.model_validate({
        "schema": "dpone.environment.v1", "id": "prod", "tier": tier,
        "platform_instance_id": "p", "tenant_id": "t", "environment_id": "prod",
        "namespace_revision": 1})


def _check(tmp_path: Path, tier: str, ref: str) -> None:
    path = tmp_path / "binding.yaml"
    path.write_text(BINDING.read_text(encoding="utf-8").replace(EXAMPLE_REF, ref),
                    encoding="utf-8")
    doc = load_yaml_file(path)
    check_remote_identity(validate_document(ConnectionBinding, doc), _environment(tier), doc)


def test_production_accepts_only_content_addressed_evidence(tmp_path: Path) -> None:
    _check(tmp_path, "development", EXAMPLE_REF)
    _check(tmp_path, "production", DIGEST_REF)
    with pytest.raises(DponeError) as refused:
        _check(tmp_path, "production", EXAMPLE_REF)
    assert refused.value.code == "binding.invalid_evidence_ref"
    assert "not content-addressed" in refused.value.message
    assert refused.value.location is not None
    assert refused.value.location.path == "remote_identity.evidence_ref"
    assert refused.value.location.line == 16


@pytest.mark.parametrize("ref", [
    "https://attest.example.test/whoami", "evidence://", "evidence://x", "file:/etc/passwd",
    "evidence://Platform/whoami", "evidence://platform/../secret", "attestation-1",
    "evidence://platform/who ami"])
def test_a_value_that_is_not_an_evidence_reference_is_refused(tmp_path: Path, ref: str) -> None:
    with pytest.raises(DponeError) as refused:
        _check(tmp_path, "development", ref)
    assert refused.value.code == "binding.invalid_evidence_ref"
