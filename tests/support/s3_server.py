"""A real S3-protocol server (moto's standalone server) on a free loopback port, and dummy
credentials for a test: shared by the artifact store suite and the executor suite."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

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


@contextlib.contextmanager
def moto_server(log: Path) -> Iterator[str]:
    """The URL of a moto S3 server that runs until the block ends (its output in ``log``)."""
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


def dummy_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Dummy AWS credentials in the environment for this test only (boto3's standard chain
    finds them; the developer's shared AWS files are hidden), and no proxy for loopback."""
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
