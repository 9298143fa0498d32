"""The executor image without a container runtime: the wheel installed with the image's extras
into a fresh venv, `dpone plan --publish` publishing a plan into a real S3 server, and that
venv's `dpone-executor run` started as a process from an empty directory, with no registry,
against the session's PostgreSQL journal, the S3 artifact store and the mock receiver. It
delivers once per delivery key, prints the result and leaves it for KPO's XCom sidecar, and
exports its spans over OTLP when the pod's OTEL_* variables ask for them; an unpinned or altered
plan is refused with exit 2 and a stable code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, bind_registry
from support.otlp_endpoint import OtlpEndpoint
from support.postgres_source import (
    DSN_FILE_VARIABLE,
    PASSWORD_SENTINEL,
    measurements_table,
    source_dsn,
    write_postgres_workload,
)

pytestmark = pytest.mark.slow

WORKLOAD = "measurements_sync"
WEEK = ("2026-08-01", "2026-08-08")
_BUILD_TOOLS = {"airflow", "apache-airflow", "pytest", "hypothesis", "moto", "mypy", "ruff",
                "syrupy", "import-linter", "starlette", "uvicorn"}


@dataclass(frozen=True)
class Pod:
    """What the executor's pod sees: its environment, an empty working directory, the source
    volume, the XCom directory and the artifact store URL."""

    env: dict[str, str]
    work: Path
    source: Path
    xcom: Path
    artifacts: str
    bucket: str
    admin: Any

    def run(self, venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(venv / "bin" / "dpone-executor"), "run", *args],
                              capture_output=True, text=True, timeout=120, check=False,
                              cwd=self.work, env=self.env)


@pytest.fixture
def receiver() -> Any:
    with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0.2)) as running:
        yield running


@pytest.fixture
def pod(tmp_path: Path, s3_endpoint: str, journal_schema_url: str, receiver: ReceiverThread,
        image_venv: Path) -> Pod:
    admin = boto3.session.Session(aws_access_key_id="dpone-test", aws_secret_access_key="dpone-test",
                                  region_name="us-east-1").client(
        "s3", endpoint_url=s3_endpoint, config=Config(proxies={}))
    bucket = f"dpone-{uuid.uuid4().hex[:20]}"
    admin.create_bucket(Bucket=bucket)
    artifacts = f"s3://{bucket}/env-ops?endpoint_url={s3_endpoint}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    environments = tmp_path / "control-plane"
    environments.mkdir()
    (environments / "ops.yaml").write_text(
        "schema: dpone.environment.v1\nid: ops\ntier: development\n"
        "platform_instance_id: dpone-local\ntenant_id: examples\nenvironment_id: local-dev\n"
        "namespace_revision: 1\nleases: {ttl_s: 30, heartbeat_s: 10}\n"
        "runtime: {features: {rest_bulk_delivery_v1: true}}\n"
        f"control_plane:\n  journal: '{journal_schema_url}'\n  artifacts: '{artifacts}'\n",
        encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch),
           "TMPDIR": str(scratch), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           "AWS_ACCESS_KEY_ID": "dpone-test", "AWS_SECRET_ACCESS_KEY": "dpone-test",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
           "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
           TOKEN_ENV: TOKEN, "DPONE_ENVIRONMENTS": str(environments)}
    work = tmp_path / "pod"
    (work / "xcom").mkdir(parents=True)
    env["DPONE_XCOM_DIR"] = str(work / "xcom")
    return Pod(env, work, tmp_path / "volume", work / "xcom", artifacts, bucket, admin)


def _publish(venv: Path, pod: Pod, tmp_path: Path, receiver: ReceiverThread, *,
             table: str | None = None) -> str:
    """CI: `dpone plan --publish` into the environment's artifact store; the registry (and
    with it every workload and authoring file) is then removed, only its data stays mounted.
    With ``table`` the published workload reads that PostgreSQL table instead of the CSV."""
    registry = bind_registry(tmp_path, receiver.base_url)
    shutil.copytree(registry / "data", pod.source / "data")
    workload = WORKLOAD if table is None else write_postgres_workload(registry, table).stem
    planned = subprocess.run(
        [str(venv / "bin" / "dpone"), "plan", str(registry / "workloads" / f"{workload}.yaml"),
         "--registry", str(registry), "--out", str(tmp_path / "ci"), "--publish",
         "--artifacts", pod.artifacts, "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False, env=pod.env, cwd=tmp_path)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    document = json.loads(planned.stdout)
    assert document["published"]["key"] == (
        f"plans/sha256/{document['plan_digest'].removeprefix('sha256:')}.json")
    shutil.rmtree(registry)
    return str(document["plan_digest"])


def _run_args(digest: str, pod: Pod) -> tuple[str, ...]:
    return ("--plan-digest", digest, "--interval-start", WEEK[0], "--interval-end", WEEK[1],
            "--environment", "ops", "--source-root", str(pod.source), "--format", "json")


def test_the_executor_venv_delivers_a_published_plan_once_per_key(
        image_venv: Path, pod: Pod, tmp_path: Path, receiver: ReceiverThread) -> None:
    digest = _publish(image_venv, pod, tmp_path, receiver)

    first = pod.run(image_venv, *_run_args(digest, pod))

    assert first.returncode == 0, first.stdout + first.stderr
    document = json.loads(first.stdout)
    assert document["schema"] == "dpone.delivery_result.v1"
    assert document["status"] == "completed" and document["children_total"] >= 1
    assert json.loads((pod.xcom / "return.json").read_text("utf-8")) == document
    mutations = receiver.state.ledger.mutations
    assert len(mutations) == document["children_total"]
    assert set(Counter(m.key for m in mutations).values()) == {1}
    assert sorted(p.name for p in pod.work.iterdir()) == ["xcom"]

    again = pod.run(image_venv, *_run_args(digest, pod))  # a retried pod: nothing is resent
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["parent_id"] == document["parent_id"]
    assert len(receiver.state.ledger.mutations) == len(mutations)


def _delivered_once(run: subprocess.CompletedProcess[str], pod: Pod,
                    receiver: ReceiverThread) -> dict[str, Any]:
    assert run.returncode == 0, run.stdout + run.stderr
    document: dict[str, Any] = json.loads(run.stdout)
    assert document["status"] == "completed" and document["children_total"] >= 1
    assert json.loads((pod.xcom / "return.json").read_text("utf-8")) == document
    mutations = receiver.state.ledger.mutations
    assert len(mutations) == document["children_total"]
    assert set(Counter(m.key for m in mutations).values()) == {1}
    assert sum(m.rows for m in mutations) == document["rows_total"] > 0
    return document


def test_the_executor_venv_reads_a_file_source_from_an_s3_prefix(
        image_venv: Path, pod: Pod, tmp_path: Path, receiver: ReceiverThread) -> None:
    digest = _publish(image_venv, pod, tmp_path, receiver)
    pod.admin.upload_file(str(pod.source / "data" / "measurements.csv"), pod.bucket,
                          "landing/data/measurements.csv")
    endpoint = pod.artifacts.partition("?")[2]
    root = f"s3://{pod.bucket}/landing?{endpoint}"
    args = [a if a != str(pod.source) else root for a in _run_args(digest, pod)]

    _delivered_once(pod.run(image_venv, *args), pod, receiver)

    assert sorted(p.name for p in pod.work.iterdir()) == ["xcom"]
    assert [p.name for p in Path(pod.env["TMPDIR"]).iterdir()] == []  # the copy is gone


def test_the_executor_venv_reads_a_postgres_source_from_a_mounted_secret(
        image_venv: Path, pod: Pod, tmp_path: Path, receiver: ReceiverThread,
        postgres_dsn: str) -> None:
    secret = tmp_path / "secrets" / "dsn"
    secret.parent.mkdir()
    secret.write_text(source_dsn(postgres_dsn) + "\n", encoding="utf-8")
    with measurements_table(postgres_dsn) as table:
        digest = _publish(image_venv, pod, tmp_path, receiver, table=table)
        refused = pod.run(image_venv, *_run_args(digest, pod))
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert json.loads(refused.stdout)["code"] == "credential.unavailable"
        assert receiver.state.ledger.mutations == ()

        pod.env[DSN_FILE_VARIABLE] = str(secret)
        run = pod.run(image_venv, *_run_args(digest, pod))

    _delivered_once(run, pod, receiver)
    assert PASSWORD_SENTINEL not in run.stdout + run.stderr + refused.stdout + refused.stderr
    assert PASSWORD_SENTINEL not in (pod.xcom / "return.json").read_text("utf-8")


def test_the_executor_venv_holds_no_orchestrator_or_test_tool(image_venv: Path) -> None:
    listed = subprocess.run([str(image_venv / "bin" / "python"), "-m", "pip", "list",
                             "--format", "json"], capture_output=True, text=True, check=True)
    installed = {entry["name"].lower() for entry in json.loads(listed.stdout)}
    assert {"dpone", "psycopg", "boto3", "pyarrow", "hvac", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"} <= installed
    assert installed & _BUILD_TOOLS == set()
    assert not any(name.startswith("apache-airflow") for name in installed)


def test_the_executor_venv_exports_its_spans_in_the_trace_of_traceparent(
        image_venv: Path, pod: Pod, tmp_path: Path, receiver: ReceiverThread) -> None:
    digest = _publish(image_venv, pod, tmp_path, receiver)
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with OtlpEndpoint() as endpoint:
        pod.env.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint.url,
                       TRACEPARENT=f"00-{trace_id}-{parent_id}-01")
        _delivered_once(pod.run(image_venv, *_run_args(digest, pod)), pod, receiver)

    spans = endpoint.received.spans
    assert {"dpone.freeze", "dpone.seal", "dpone.seal.child"} <= {s.name for s in spans}
    assert {s.trace_id for s in spans} == {trace_id}
    assert {s.resource["service.name"] for s in spans} == {"dpone"}


@pytest.mark.parametrize("digest", [None, "sha256:not-a-digest"])
def test_the_executor_venv_refuses_an_unpinned_plan(image_venv: Path, pod: Pod,
                                                    digest: str | None,
                                                    receiver: ReceiverThread) -> None:
    pinned = () if digest is None else ("--plan-digest", digest)
    refused = pod.run(image_venv, *pinned, "--interval-start", WEEK[0], "--interval-end",
                      WEEK[1], "--environment", "ops", "--format", "json")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert json.loads(refused.stdout)["code"] == "executor.plan_unpinned"
    assert "Traceback" not in refused.stderr
    assert receiver.state.ledger.mutations == ()


def test_the_executor_venv_refuses_an_altered_plan(image_venv: Path, pod: Pod, tmp_path: Path,
                                                   receiver: ReceiverThread) -> None:
    digest = _publish(image_venv, pod, tmp_path, receiver)
    key = f"env-ops/plans/sha256/{digest.removeprefix('sha256:')}.json"
    body = pod.admin.get_object(Bucket=pod.bucket, Key=key)["Body"].read()
    pod.admin.put_object(Bucket=pod.bucket, Key=key,
                         Body=body.replace(b"measurement_readings", b"measurement_reading"))

    refused = pod.run(image_venv, *_run_args(digest, pod))

    assert refused.returncode == 2, refused.stdout + refused.stderr
    document = json.loads(refused.stdout)
    assert document["code"] == "plan.digest_mismatch"
    assert json.loads((pod.xcom / "return.json").read_text("utf-8")) == document
    assert receiver.state.ledger.mutations == ()
