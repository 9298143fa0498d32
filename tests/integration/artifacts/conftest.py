"""One real S3-protocol server (moto's standalone server) per session, on a free loopback port.

Each test that needs S3 gets a fresh bucket and dummy credentials that exist only for that
test (monkeypatched environment; the developer's shared AWS files are hidden).
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from support.artifacts import S3Bucket, StoreHarness
from support.common import free_port

_START_TIMEOUT_S = 30.0


def _answers(url: str) -> bool:
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    try:
        with direct.open(url + "/moto-api/", timeout=1):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer means the server is up
    except OSError:
        return False


def _start_server(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    for _ in range(3):  # the free port can be taken between probe and bind; try another
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with log.open("ab") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline and process.poll() is None:
            if _answers(url):
                return process, url
            time.sleep(0.05)
        process.kill()
        process.wait()
    raise RuntimeError(f"the moto S3 server did not start; see {log}")


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of the session's S3 server (started on first use, stopped at session end)."""
    log = tmp_path_factory.mktemp("moto") / "server.log"
    process, url = _start_server(log)
    try:
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def s3_admin(s3_endpoint: str) -> Any:
    """A raw boto3 client with explicit dummy credentials, for set-up and for assertions."""
    session = boto3.session.Session(aws_access_key_id="dpone-test",
                                    aws_secret_access_key="dpone-test", region_name="us-east-1")
    return session.client("s3", endpoint_url=s3_endpoint, config=Config(proxies={}))


@pytest.fixture
def s3_bucket(s3_endpoint: str, s3_admin: Any, monkeypatch: pytest.MonkeyPatch,
              tmp_path: Path) -> S3Bucket:
    """A fresh, empty bucket, and dummy credentials in the environment for this test only
    (the stores under test find them through boto3's standard chain)."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_ENDPOINT_URL",
                 "AWS_ENDPOINT_URL_S3", "AWS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "dpone-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "dpone-test")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # the server is on loopback
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    name = f"dpone-{uuid.uuid4().hex[:20]}"
    s3_admin.create_bucket(Bucket=name)
    return S3Bucket(endpoint_url=s3_endpoint, name=name, client=s3_admin)


@pytest.fixture(params=["local", "s3"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> StoreHarness:
    if request.param == "s3":
        return StoreHarness("s3", bucket=request.getfixturevalue("s3_bucket"))
    return StoreHarness("local", root=tmp_path / "artifacts")
