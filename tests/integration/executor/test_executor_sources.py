"""`dpone-executor run` reading the sources a pod has: a file source from an ``s3://`` prefix
(the object copied to the scratch directory for the run, then removed) and a PostgreSQL source
through its connection ref's credentials (``DPONE_CONN_<REF>_DSN`` or ``_DSN_FILE``, a mounted
Secret). Each run is the pinned plan from the artifact store, with no registry left, against a
real S3 server (moto), the session's PostgreSQL cluster and the mock receiver: the rows the
receiver applied are the rows sealed, once per delivery key. A missing object or credential
exits 3 with its stable code before anything is sent, and the source DSN's password appears in
no output, journal, artifact or XCom."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from click.testing import CliRunner
from psycopg.conninfo import make_conninfo

from dpone.cli.executor_app import XCOM_DIR_VARIABLE, executor
from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import FULL, TOKEN, TOKEN_ENV, Dpone, Run, bind_registry, posts
from support.cli_documents import published_document
from support.common import free_port
from support.postgres_source import (
    DSN_FILE_VARIABLE,
    DSN_VARIABLE,
    PASSWORD_SENTINEL,
    WORKLOAD,
    measurements_table,
    source_dsn,
    write_postgres_workload,
)
from support.s3_server import dummy_credentials
from support.source import EXAMPLE_CSV, expected_rows

SOURCE_ROOT_VARIABLE = "DPONE_SOURCE_ROOT"
FULL_ROWS = len(expected_rows(EXAMPLE_CSV, *(dt.date.fromisoformat(day) for day in FULL)))


@dataclass(frozen=True)
class Pod:
    """What the executor's pod has: an empty working directory, its scratch directory, the XCom
    directory, and the control plane (a SQLite journal, a local artifact store)."""

    work: Path
    scratch: Path
    xcom: Path
    journal: Path
    artifacts: Path

    def run(self, digest: str, *extra: str) -> Run:
        result = CliRunner().invoke(executor, [
            "run", "--plan-digest", digest, "--interval-start", FULL[0], "--interval-end",
            FULL[1], "--journal", str(self.journal), "--artifacts", str(self.artifacts),
            "--format", "json", *extra])
        return Run(result.exit_code, result.stdout, result.stderr)

    def leaked(self, secret: str) -> list[str]:
        """Every place of the run's output, XCom, journal and artifacts that holds ``secret``."""
        places = [path for root in (self.xcom, self.journal.parent, self.artifacts, self.work)
                  for path in sorted(root.rglob("*")) if path.is_file()]
        return [str(path) for path in places if secret.encode() in path.read_bytes()]


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReceiverThread]:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0.2)) as running:
        yield running


@pytest.fixture
def registry(tmp_path: Path, receiver: ReceiverThread) -> Path:
    return bind_registry(tmp_path, receiver.base_url)


@pytest.fixture
def pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pod:
    work, scratch = tmp_path / "pod", tmp_path / "scratch"
    (work / "xcom").mkdir(parents=True)
    scratch.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv(XCOM_DIR_VARIABLE, str(work / "xcom"))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the image's TMPDIR=/scratch
    for name in (SOURCE_ROOT_VARIABLE, DSN_VARIABLE, DSN_FILE_VARIABLE, "DPONE_ENVIRONMENTS"):
        monkeypatch.delenv(name, raising=False)
    return Pod(work, scratch, work / "xcom", tmp_path / "journal" / "journal.sqlite3",
               tmp_path / "artifacts")


def _publish(registry: Path, workload: str, pod: Pod, tmp_path: Path) -> str:
    """CI's `dpone plan --publish`; the registry is then removed altogether."""
    planned = Dpone(registry, tmp_path / "ci")(
        "plan", str(registry / "workloads" / f"{workload}.yaml"), "--registry", str(registry),
        "--out", str(tmp_path / "ci"), "--publish", "--artifacts", str(pod.artifacts),
        "--format", "json")
    assert planned.code == 0, planned.out + planned.err
    shutil.rmtree(registry)
    return str(planned.json()["plan_digest"])


def _delivered_once(run: Run, receiver: ReceiverThread, pod: Pod) -> dict[str, Any]:
    """A completed run whose receiver applied exactly the sealed rows, once per key."""
    assert run.code == 0, run.out + run.err
    document = published_document(run.out)
    assert document["status"] == "completed", document
    assert json.loads((pod.xcom / "return.json").read_text("utf-8")) == document
    mutations = receiver.state.ledger.mutations
    assert len(mutations) == document["children_total"] == posts(receiver)
    assert set(Counter(m.key for m in mutations).values()) == {1}
    assert sum(m.rows for m in mutations) == document["rows_total"] == FULL_ROWS
    return document


def _refused(run: Run, code: str, pod: Pod, receiver: ReceiverThread) -> dict[str, Any]:
    assert run.code == 3, run.out + run.err
    document = published_document(run.out)
    assert document["schema"] == "dpone.error.v1" and document["code"] == code, document
    assert json.loads((pod.xcom / "return.json").read_text("utf-8")) == document
    assert "Traceback" not in run.out + run.err
    assert posts(receiver) == 0 and receiver.state.ledger.mutations == ()
    return document


# -- a file source under an s3:// prefix -------------------------------------------------------

@pytest.fixture
def bucket(s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bucket of the moto server; the process's AWS credentials are dummies."""
    dummy_credentials(monkeypatch, tmp_path)
    name = f"dpone-src-{uuid.uuid4().hex[:16]}"
    _admin(s3_endpoint).create_bucket(Bucket=name)
    return name


def _admin(endpoint: str) -> Any:
    return boto3.session.Session(aws_access_key_id="dpone-test",
                                 aws_secret_access_key="dpone-test",
                                 region_name="us-east-1").client(
        "s3", endpoint_url=endpoint, config=Config(proxies={}))


@pytest.mark.parametrize("given", ["option", "environment"])
def test_a_file_source_is_read_from_an_s3_prefix_and_its_copy_removed(
        given: str, registry: Path, tmp_path: Path, pod: Pod, receiver: ReceiverThread,
        s3_endpoint: str, bucket: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _admin(s3_endpoint).upload_file(str(registry / "data" / "measurements.csv"), bucket,
                                    "landing/daily/data/measurements.csv")
    digest = _publish(registry, "measurements_sync", pod, tmp_path)
    root = f"s3://{bucket}/landing/daily?endpoint_url={s3_endpoint}"
    extra: tuple[str, ...] = ("--source-root", root)
    if given == "environment":
        monkeypatch.setenv(SOURCE_ROOT_VARIABLE, root)
        extra = ()

    first = pod.run(digest, *extra)

    document = _delivered_once(first, receiver, pod)
    assert list(pod.scratch.iterdir()) == []  # the downloaded copy is gone
    again = pod.run(digest, *extra)  # a retried pod re-reads the object: nothing is resent
    assert again.code == 0, again.out + again.err
    assert published_document(again.out)["parent_id"] == document["parent_id"]
    assert len(receiver.state.ledger.mutations) == document["children_total"]


def test_a_missing_s3_source_object_exits_3_and_sends_nothing(
        registry: Path, tmp_path: Path, pod: Pod, receiver: ReceiverThread, s3_endpoint: str,
        bucket: str) -> None:
    digest = _publish(registry, "measurements_sync", pod, tmp_path)

    run = pod.run(digest, "--source-root", f"s3://{bucket}/empty?endpoint_url={s3_endpoint}")

    document = _refused(run, "source.unavailable", pod, receiver)
    assert f"s3://{bucket}/empty/data/measurements.csv" in str(document["message"])
    assert "endpoint_url" not in str(document["message"])
    assert list(pod.scratch.iterdir()) == []
    assert not pod.journal.exists()  # nothing was admitted


# -- a PostgreSQL source through its connection ref ------------------------------------------

@pytest.fixture(scope="module")
def table(postgres_dsn: str) -> Iterator[str]:
    with measurements_table(postgres_dsn) as name:
        yield name


@pytest.fixture
def pg_plan(registry: Path, table: str, pod: Pod, tmp_path: Path) -> str:
    write_postgres_workload(registry, table)
    return _publish(registry, WORKLOAD, pod, tmp_path)


@pytest.mark.parametrize("how", ["dsn", "dsn_file"])
def test_a_postgres_source_is_read_through_its_connection_ref(
        how: str, pg_plan: str, pod: Pod, receiver: ReceiverThread, postgres_dsn: str,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dsn = source_dsn(postgres_dsn)
    if how == "dsn":
        monkeypatch.setenv(DSN_VARIABLE, dsn)
    else:  # a Kubernetes Secret mounted as a file
        secret = tmp_path / "secrets" / "warehouse-dsn"
        secret.parent.mkdir()
        secret.write_text(dsn + "\n", encoding="utf-8")
        monkeypatch.setenv(DSN_FILE_VARIABLE, str(secret))

    run = pod.run(pg_plan)

    _delivered_once(run, receiver, pod)
    assert PASSWORD_SENTINEL not in run.out + run.err
    assert pod.leaked(PASSWORD_SENTINEL) == []


def test_a_postgres_source_without_credentials_exits_3_naming_the_variables(
        pg_plan: str, pod: Pod, receiver: ReceiverThread) -> None:
    document = _refused(pod.run(pg_plan), "credential.unavailable", pod, receiver)
    assert DSN_VARIABLE in str(document["message"])
    assert DSN_FILE_VARIABLE in str(document["message"])
    assert not pod.journal.exists()


def test_an_unreachable_source_database_never_echoes_its_dsn(
        pg_plan: str, pod: Pod, receiver: ReceiverThread, postgres_dsn: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DSN_VARIABLE, make_conninfo(source_dsn(postgres_dsn), port=free_port(),
                                                   connect_timeout=5))

    run = pod.run(pg_plan)

    document = _refused(run, "source.unavailable", pod, receiver)
    assert document["message"] == "cannot connect to the source database"  # the DSN was used
    assert PASSWORD_SENTINEL not in run.out + run.err
    assert pod.leaked(PASSWORD_SENTINEL) == []
