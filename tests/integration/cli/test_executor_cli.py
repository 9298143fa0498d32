"""`dpone-executor run`: a pinned plan, read by its digest from the artifact store where
`dpone plan --publish` put it, delivered from an empty working directory with no registry and
no workload anywhere; its one result document goes to stdout and to the XCom directory. An
unpinned, unknown, altered or schema-invalid plan is refused with exit 2 and a stable code
before anything is opened or sent."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from dpone.cli.executor_app import XCOM_DIR_VARIABLE, executor, run_pinned
from dpone.contracts import canonical_json, content_digest
from dpone.contracts.documents import CompletedResult
from dpone.receiver import ReceiverThread
from support.cli import FULL, Dpone, Run, posts
from support.cli_documents import published_document
from support.common import free_port
from support.prometheus import pushgateway_fixture  # noqa: F401  (the pushgateway fixture)

WORKLOAD = "measurements_sync"


def _executor(*args: str) -> Run:
    result = CliRunner().invoke(executor, ["run", *args])
    return Run(result.exit_code, result.stdout, result.stderr)


def _published(registry: Path, artifacts: Path, tmp_path: Path) -> str:
    """`dpone plan --publish`: the plan's digest; the registry is then removed altogether."""
    planned = Dpone(registry, tmp_path / "ci")(
        "plan", str(registry / "workloads" / f"{WORKLOAD}.yaml"), "--registry", str(registry),
        "--out", str(tmp_path / "ci"), "--publish", "--artifacts", str(artifacts),
        "--format", "json")
    assert planned.code == 0, planned.out + planned.err
    document = planned.json()
    digest = str(document["plan_digest"])
    assert document["published"] == {"artifacts": str(artifacts),
                                      "key": f"plans/sha256/{digest.removeprefix('sha256:')}.json"}
    assert (artifacts / document["published"]["key"]).is_file()
    return digest


@pytest.fixture
def pod(registry: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """What the executor's pod has: an empty working directory, the source volume (the
    registry's data/, copied), an XCom directory; the registry itself is gone."""
    source = tmp_path / "volume"
    shutil.copytree(registry / "data", source / "data")
    work = tmp_path / "pod"
    (work / "xcom").mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv(XCOM_DIR_VARIABLE, str(work / "xcom"))
    monkeypatch.delenv("DPONE_ENVIRONMENTS", raising=False)
    return {"source": source, "xcom": work / "xcom", "work": work}


def test_a_published_plan_runs_by_digest_with_no_registry_and_writes_the_xcom(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread,
        pod: dict[str, Path]) -> None:
    artifacts = tmp_path / "artifacts"
    digest = _published(registry, artifacts, tmp_path)
    shutil.rmtree(registry)  # no workload, profile, binding or environment file is left
    args = ("--plan-digest", digest, "--interval-start", FULL[0], "--interval-end", FULL[1],
            "--journal", journal_url, "--artifacts", str(artifacts),
            "--source-root", str(pod["source"]), "--format", "json")

    first = _executor(*args)

    assert first.code == 0, first.out + first.err
    document = published_document(first.out)
    assert document["status"] == "completed"
    assert json.loads((pod["xcom"] / "return.json").read_text("utf-8")) == document
    mutations = receiver.state.ledger.mutations
    assert len(mutations) == document["children_total"] == posts(receiver)
    assert set(Counter(m.key for m in mutations).values()) == {1}  # one per delivery key
    assert list(pod["work"].iterdir()) == [pod["xcom"]]  # nothing written to the cwd

    again = _executor(*args)  # a retried task resumes the admitted delivery: nothing resent
    assert again.code == 0, again.out + again.err
    assert published_document(again.out)["parent_id"] == document["parent_id"]
    assert len(receiver.state.ledger.mutations) == len(mutations)


def test_the_in_process_entry_returns_the_result_document(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread,
        pod: dict[str, Path]) -> None:
    artifacts = tmp_path / "artifacts"
    digest = _published(registry, artifacts, tmp_path)
    outcome = run_pinned(plan_digest=digest, interval_start=dt.date.fromisoformat(FULL[0]),
                         interval_end=dt.date.fromisoformat(FULL[1]), journal=journal_url,
                         artifacts=str(artifacts), source_root=pod["source"])
    assert outcome.exit_code == 0
    assert isinstance(outcome.document, CompletedResult)
    assert outcome.document.children_total == len(receiver.state.ledger.mutations)
    assert not (pod["xcom"] / "return.json").exists()  # only the command writes the XCom


def _refused(run: Run, code: str, xcom: Path) -> dict[str, object]:
    assert run.code == 2, run.out + run.err
    document = published_document(run.out)
    assert document["schema"] == "dpone.error.v1" and document["code"] == code, document
    assert json.loads((xcom / "return.json").read_text("utf-8")) == document
    assert "Traceback" not in run.out + run.err
    return document


@pytest.mark.parametrize("digest", [None, "sha256:abc", "SHA256:" + "a" * 64,
                                    "measurements_sync.yaml"])
def test_an_unpinned_plan_is_refused(digest: str | None, tmp_path: Path,
                                     pod: dict[str, Path]) -> None:
    pinned = () if digest is None else ("--plan-digest", digest)
    run = _executor(*pinned, "--interval-start", FULL[0], "--interval-end", FULL[1],
                    "--artifacts", str(tmp_path / "artifacts"), "--format", "json")
    _refused(run, "executor.plan_unpinned", pod["xcom"])
    assert not (tmp_path / "artifacts").exists()


def _run_digest(digest: str, artifacts: Path, *extra: str) -> Run:
    return _executor("--plan-digest", digest, "--interval-start", FULL[0], "--interval-end",
                     FULL[1], "--artifacts", str(artifacts), "--format", "json", *extra)


def test_an_unknown_plan_is_refused(tmp_path: Path, pod: dict[str, Path],
                                    receiver: ReceiverThread) -> None:
    document = _refused(_run_digest("sha256:" + "0" * 64, tmp_path / "artifacts"),
                        "plan.not_found", pod["xcom"])
    assert "dpone plan" in str(document["hint"]) and "--publish" in str(document["hint"])
    assert posts(receiver) == 0


def test_an_altered_plan_is_refused(registry: Path, tmp_path: Path, pod: dict[str, Path],
                                    receiver: ReceiverThread) -> None:
    artifacts = tmp_path / "artifacts"
    digest = _published(registry, artifacts, tmp_path)
    stored = artifacts / "plans" / "sha256" / f"{digest.removeprefix('sha256:')}.json"
    stored.chmod(0o644)
    stored.write_bytes(stored.read_bytes().replace(b"measurement_readings", b"measurement_reading"))
    _refused(_run_digest(digest, artifacts, "--source-root", str(pod["source"])),
             "plan.digest_mismatch", pod["xcom"])
    assert posts(receiver) == 0


def test_a_published_document_that_is_not_a_plan_is_refused(tmp_path: Path,
                                                            pod: dict[str, Path]) -> None:
    artifacts = tmp_path / "artifacts"
    body = canonical_json({"schema": "dpone.rest_delivery_plan.v1", "name": "not a plan"})
    digest = content_digest(body)
    key = artifacts / "plans" / "sha256" / f"{digest.removeprefix('sha256:')}.json"
    key.parent.mkdir(parents=True)
    key.write_bytes(body)
    _refused(_run_digest(digest, artifacts), "contract.schema_invalid", pod["xcom"])


def _control_plane(tmp_path: Path, artifacts: Path, name: str, monkeypatch: pytest.MonkeyPatch,
                   deliveries: str = "true") -> None:
    """``DPONE_ENVIRONMENTS`` naming a control plane with the environment file ``name`` (its
    environment id is ``name``; its kill switch ``deliveries``)."""
    environments = tmp_path / "control-plane"
    environments.mkdir()
    (environments / f"{name}.yaml").write_text(
        f"schema: dpone.environment.v1\nid: {name}\ntier: development\n"
        f"platform_instance_id: dpone-local\ntenant_id: examples\nenvironment_id: {name}\n"
        f"namespace_revision: 1\nruntime: {{features: {{rest_bulk_delivery_v1: {deliveries}}}}}\n"
        f"control_plane:\n  journal: '{tmp_path / 'j.sqlite3'}'\n"
        f"  artifacts: '{artifacts}'\n", encoding="utf-8")
    monkeypatch.setenv("DPONE_ENVIRONMENTS", str(environments))


def test_a_plan_of_another_environment_is_refused(registry: Path, tmp_path: Path,
                                                  pod: dict[str, Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    artifacts = tmp_path / "artifacts"
    digest = _published(registry, artifacts, tmp_path)
    _control_plane(tmp_path, artifacts, "prod", monkeypatch)
    run = _executor("--plan-digest", digest, "--interval-start", FULL[0], "--interval-end",
                    FULL[1], "--environment", "prod", "--source-root", str(pod["source"]),
                    "--format", "json")
    _refused(run, "executor.environment_mismatch", pod["xcom"])
    assert not (tmp_path / "j.sqlite3").exists()


def test_the_kill_switch_off_admits_nothing(registry: Path, tmp_path: Path,
                                            pod: dict[str, Path],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    artifacts = tmp_path / "artifacts"
    digest = _published(registry, artifacts, tmp_path)
    _control_plane(tmp_path, artifacts, "local-dev", monkeypatch, deliveries="false")
    run = _executor("--plan-digest", digest, "--interval-start", FULL[0], "--interval-end",
                    FULL[1], "--environment", "local-dev", "--source-root", str(pod["source"]),
                    "--format", "json")
    _refused(run, "runtime.feature_disabled", pod["xcom"])
    assert not (tmp_path / "j.sqlite3").exists()


def test_a_file_source_needs_the_source_root(registry: Path, tmp_path: Path,
                                             pod: dict[str, Path]) -> None:
    artifacts = tmp_path / "artifacts"
    digest = _published(registry, artifacts, tmp_path)
    document = _refused(_run_digest(digest, artifacts), "input.invalid_argument", pod["xcom"])
    assert "--source-root" in str(document["message"])


def test_the_executor_pushes_its_metrics_to_a_real_pushgateway_at_exit(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread,
        pod: dict[str, Path], pushgateway: str) -> None:
    artifacts = tmp_path / "artifacts"
    digest = _published(registry, artifacts, tmp_path)
    run = _executor("--plan-digest", digest, "--interval-start", FULL[0], "--interval-end",
                    FULL[1], "--journal", journal_url, "--artifacts", str(artifacts),
                    "--source-root", str(pod["source"]), "--metrics-pushgateway", pushgateway,
                    "--format", "json")
    assert run.code == 0, run.out + run.err
    parent_id = str(published_document(run.out)["parent_id"])
    with urllib.request.urlopen(f"{pushgateway}/metrics", timeout=10) as response:
        text = response.read().decode()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    grouping = {"job": "dpone_executor", "environment": "local-dev",
                "profile": "mock.batch-ndjson"}
    # A pod runs one plan; this test process ran others before, so read this profile's series.
    pushed = [sample for sample in families["dpone_requests"].samples
              if sample.name == "dpone_requests_total" and sample.labels["phase"] == "submit"
              and grouping.items() <= sample.labels.items()]
    assert pushed, text[:2000]
    assert sum(sample.value for sample in pushed) >= posts(receiver)
    assert parent_id not in text and digest not in text  # no id anywhere in the pushed group


def test_an_unreachable_pushgateway_is_reported_and_changes_no_exit_code(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread,
        pod: dict[str, Path]) -> None:
    artifacts = tmp_path / "artifacts"
    digest = _published(registry, artifacts, tmp_path)
    gateway = f"http://127.0.0.1:{free_port()}"
    run = _executor("--plan-digest", digest, "--interval-start", FULL[0], "--interval-end",
                    FULL[1], "--journal", journal_url, "--artifacts", str(artifacts),
                    "--source-root", str(pod["source"]), "--metrics-pushgateway", gateway)
    assert run.code == 0, run.out + run.err
    assert f"warning: metrics not pushed to {gateway}" in run.err
