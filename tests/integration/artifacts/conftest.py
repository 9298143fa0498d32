"""One real S3-protocol server (moto's standalone server) per session, on a free loopback port.

Each test that needs S3 gets a fresh bucket and dummy credentials that exist only for that
test (monkeypatched environment; the developer's shared AWS files are hidden).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from support.artifacts import S3Bucket, StoreHarness
from support.s3_server import dummy_credentials, moto_server


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of the session's S3 server (started on first use, stopped at session end)."""
    with moto_server(tmp_path_factory.mktemp("moto") / "server.log") as url:
        yield url


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
    dummy_credentials(monkeypatch, tmp_path)
    name = f"dpone-{uuid.uuid4().hex[:20]}"
    s3_admin.create_bucket(Bucket=name)
    return S3Bucket(endpoint_url=s3_endpoint, name=name, client=s3_admin)


@pytest.fixture(params=["local", "s3"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> StoreHarness:
    if request.param == "s3":
        return StoreHarness("s3", bucket=request.getfixturevalue("s3_bucket"))
    return StoreHarness("local", root=tmp_path / "artifacts")
