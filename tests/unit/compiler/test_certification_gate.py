"""An environment's certification policy, enforced when a plan compiles (offline, before HTTP).

The registry is a copy of the examples whose environment requires a maturity and a certification
level; certifications are written into ``<registry>/certifications/`` as `dpone profile certify`
writes them. Each refusal names the evidence that is missing; a passing, fresh certification of
the exact profile contract, binding and environment lets the plan compile, and only its fence
cases decide whether the fence claim authorizes a same-key replay.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpone import __version__
from dpone.cli.main import cli
from dpone.compiler import compile_workload
from dpone.compiler.certification_gate import PRODUCTION_DEFAULT, effective_policy
from dpone.contracts import DponeError
from dpone.contracts.certification import (
    CASES,
    CaseResult,
    CertificationPolicy,
    SinkCertification,
    Verdict,
)
from dpone.contracts.plan import RestDeliveryPlan

ASYNC = "workloads/measurements_async.yaml"
NOW = dt.datetime.now(dt.UTC)


def _policy(registry: Path, text: str) -> None:
    path = registry / "environments" / "local-dev.yaml"
    path.write_text(path.read_text("utf-8") + text, "utf-8")


def _maturity(registry: Path, maturity: str) -> None:
    path = registry / "profiles" / "mock.dataset-jobs@1.yaml"
    text = path.read_text("utf-8").replace("version: 1\n", f"version: 1\nmaturity: {maturity}\n", 1)
    path.write_text(text, "utf-8")


def _plan(registry: Path) -> RestDeliveryPlan:
    return compile_workload(registry / ASYNC, registry).plan


def _certify(registry: Path, plan: RestDeliveryPlan, *, level: str = "local-live",
             result: Verdict = "PASS", age_days: int = 1,
             verdicts: dict[str, Verdict] | None = None, name: str = "local-live") -> Path:
    certified_at = NOW - dt.timedelta(days=age_days)
    cases = tuple(CaseResult(case=case, claim="as the profile states", verdict=(verdicts or {})
                             .get(case, "PASS"), reason="fixture",
                             measured={"retention_tested_s": 30} if case == "key_retention"
                             else {}) for case in CASES)
    certification = SinkCertification(
        profile=plan.profile.ref, profile_contract_digest=plan.profile.profile_contract_digest,
        operation_semantics_digest=plan.profile.operation_semantics_digest,
        binding=plan.binding.ref,
        receiver_binding_semantics_digest=plan.binding.receiver_binding_semantics_digest,
        environment=plan.environment.ref, level=level, product_version=__version__,
        certified_at=certified_at, valid_until=certified_at + dt.timedelta(days=365),
        sandbox_resource="dpone_certification", cases=cases, result=result)
    path = registry / "certifications" / plan.profile.ref / plan.environment.ref / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(certification.model_dump_json(by_alias=True, indent=2), "utf-8")
    return path


def _refused(registry: Path) -> DponeError:
    with pytest.raises(DponeError) as caught:
        _plan(registry)
    return caught.value


def test_without_a_policy_the_claims_stand(registry: Path) -> None:
    fence = _plan(registry).fence
    assert (fence.certified_in_environment, fence.certified_retention_s) == (True, None)


def test_a_less_mature_profile_is_refused_at_its_maturity(registry: Path) -> None:
    _policy(registry, "certification: {minimum_maturity: beta}\n")
    _maturity(registry, "experimental")
    error = _refused(registry)
    assert error.code == "certification.maturity_too_low"
    assert error.location is not None and error.location.file.endswith("mock.dataset-jobs@1.yaml")
    assert "requires beta or more" in error.message


def test_a_missing_certification_names_the_level_and_the_command(registry: Path) -> None:
    _policy(registry, "certification: {required_levels: [local-live]}\n")
    result = CliRunner().invoke(cli, ["check", str(registry / ASYNC), "--registry",
                                      str(registry), "--format", "json"])
    assert result.exit_code == 2
    error = json.loads(result.stdout)
    assert error["code"] == "certification.missing"
    assert error["details"]["level"] == "local-live"
    assert "dpone profile certify mock.dataset-jobs@1 --binding mock_measurements " \
           "--environment local-dev --level local-live" in error["hint"]


def test_a_passing_fresh_certification_lets_it_compile_and_proves_the_fence(
        registry: Path) -> None:
    plan = _plan(registry)
    _policy(registry, "certification: {minimum_maturity: beta, required_levels: [local-live]}\n")
    _maturity(registry, "beta")
    _certify(registry, plan)  # maturity is not part of the profile contract digest
    fence = _plan(registry).fence
    assert (fence.certified_in_environment, fence.certified_retention_s) == (True, 30)


def test_a_higher_level_covers_a_lower_one(registry: Path) -> None:
    plan = _plan(registry)
    _policy(registry, "certification: {required_levels: [local-live]}\n")
    _certify(registry, plan, level="vendor-live", name="vendor-live")
    _plan(registry)


def test_a_stale_certification_is_refused(registry: Path) -> None:
    plan = _plan(registry)
    _policy(registry, "certification: {required_levels: [local-live], max_age_days: 30}\n")
    _certify(registry, plan, age_days=31)
    error = _refused(registry)
    assert error.code == "certification.stale"
    assert "older than 30 day(s)" in error.message


def test_a_failed_certification_is_missing_and_names_the_failed_case(registry: Path) -> None:
    plan = _plan(registry)
    _policy(registry, "certification: {required_levels: [local-live]}\n")
    _certify(registry, plan, result="FAIL", verdicts={"key_retention": "FAIL"})
    error = _refused(registry)
    assert error.code == "certification.missing"
    assert "(its certification FAILED: key_retention)" in error.message


def test_a_certification_of_another_receiver_does_not_count(registry: Path) -> None:
    plan = _plan(registry)
    _certify(registry, plan)
    binding = registry / "bindings" / "mock_measurements.yaml"
    binding.write_text(binding.read_text("utf-8").replace("127.0.0.1:8765", "127.0.0.1:8766"),
                       "utf-8")
    _policy(registry, "certification: {required_levels: [local-live]}\n")
    assert _refused(registry).code == "certification.missing"


def test_an_unproven_fence_case_leaves_the_claim_unauthorized(registry: Path) -> None:
    plan = _plan(registry)
    _policy(registry, "certification: {required_levels: [static]}\n")
    _certify(registry, plan, level="static", name="static",
             verdicts={"key_payload_binding": "UNVERIFIED"})
    assert _plan(registry).fence.certified_in_environment is False


def test_a_production_environment_without_a_policy_gets_the_production_default() -> None:
    assert effective_policy(None, "development") is None
    default = effective_policy(None, "production")
    assert default == PRODUCTION_DEFAULT
    assert (default.minimum_maturity, default.required_levels) == ("production", ("vendor-live",))
    own = CertificationPolicy(required_levels=("local-live",))
    assert effective_policy(own, "production") is own
