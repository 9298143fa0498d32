"""An environment that requires a certification refuses an uncertified or stale-certified
profile before any HTTP: `dpone deliver` exits 2 with the missing evidence named, the receiver
counts no request and no journal is created."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from dpone import __version__
from dpone.compiler import compile_workload
from dpone.contracts.certification import CASES, CaseResult, SinkCertification
from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, TWO_ASYNC_CHILDREN, Dpone, bind_registry


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


def _require(registry: Path, policy: str) -> None:
    path = registry / "environments" / "local-dev.yaml"
    path.write_text(path.read_text("utf-8") + f"certification: {policy}\n", "utf-8")


def _stale_certification(registry: Path) -> None:
    plan = compile_workload(registry / "workloads" / "measurements_async.yaml", registry).plan
    certified_at = dt.datetime.now(dt.UTC) - dt.timedelta(days=45)
    certification = SinkCertification(
        profile=plan.profile.ref, profile_contract_digest=plan.profile.profile_contract_digest,
        operation_semantics_digest=plan.profile.operation_semantics_digest,
        binding=plan.binding.ref,
        receiver_binding_semantics_digest=plan.binding.receiver_binding_semantics_digest,
        environment=plan.environment.ref, level="local-live", product_version=__version__,
        certified_at=certified_at, valid_until=certified_at + dt.timedelta(days=365),
        sandbox_resource="dpone_certification",
        cases=tuple(CaseResult(case=c, claim="-", verdict="PASS", reason="-") for c in CASES),
        result="PASS")
    path = registry / "certifications" / "stale.json"
    path.parent.mkdir(parents=True)
    path.write_text(certification.model_dump_json(by_alias=True), "utf-8")


@pytest.mark.parametrize(("certified", "code"), [(False, "certification.missing"),
                                                 (True, "certification.stale")])
def test_an_uncertified_or_stale_profile_is_refused_before_any_http(
        tmp_path: Path, certified: bool, code: str) -> None:
    with ReceiverThread(ReceiverConfig(token=TOKEN)) as receiver:
        dpone = Dpone(bind_registry(tmp_path, receiver.base_url), tmp_path / "state")
        if certified:
            _stale_certification(dpone.registry)
        _require(dpone.registry, "{required_levels: [local-live], max_age_days: 30}")

        run = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")

        assert run.code == 2
        assert run.json()["code"] == code
        assert receiver.state.ledger.snapshot()["requests"] == {}
        assert receiver.state.exchanges.snapshot() == []
    assert not Path(dpone.journal_url).exists()
