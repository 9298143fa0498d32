"""`dpone preview` shows what the receiver really receives, and reads no network and no credential.

For every child of both examples: the preview's method, path and query, every header but the
credential, and the body digest equal what the mock receiver recorded when `dpone deliver` sent
the same interval (``GET /mock/_requests``). Then the preview runs in a process whose sockets
are denied, with the sentinel token in the credential's variable: every format succeeds, shows
the reference, and never the token. The curl format is run against the receiver, which applies it.
A store `dpone seal` sealed into is read by ``--artifacts`` and never written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, TWO_ASYNC_CHILDREN, Dpone, bind_registry
from support.common import EXAMPLES

SYNC_TWO_WEEKS = ("2026-08-01", "2026-08-15")
REFERENCE = f"<bearer from env {TOKEN_ENV}>"
DENY_NETWORK = '''
import socket

def _denied(*args, **kwargs):
    raise OSError("network denied in this test")

socket.socket.connect = _denied
socket.socket.connect_ex = _denied
socket.create_connection = _denied
socket.getaddrinfo = _denied
'''


@pytest.fixture
def receiver() -> ReceiverThread:
    with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0.0)) as running:
        yield running


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


def _preview(dpone: Dpone, workload: str, interval: tuple[str, str], *extra: str) -> dict:
    run = dpone("preview", str(dpone.registry / "workloads" / f"{workload}.yaml"), "--registry",
                str(dpone.registry), "--interval-start", interval[0], "--interval-end",
                interval[1], "--format", "json", *extra)
    assert run.code == 0, run.err
    return run.json()


def _received(receiver: ReceiverThread) -> list[dict]:
    """What the receiver recorded, read as any client reads it: ``GET /mock/_requests``."""
    with httpx.Client(base_url=receiver.base_url, headers={"Authorization": f"Bearer {TOKEN}"},
                      trust_env=False, timeout=10.0) as http:
        answer = http.get("/mock/_requests")
    assert answer.status_code == 200
    requests: list[dict] = answer.json()["requests"]
    return requests


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def _wire(headers: list[tuple[str, str]] | list[list[str]]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers if name.lower() != "authorization"}


@pytest.mark.parametrize(("workload", "interval"), [
    ("measurements_sync", SYNC_TWO_WEEKS), ("measurements_async", TWO_ASYNC_CHILDREN)])
def test_every_previewed_request_is_what_the_receiver_received(
        receiver: ReceiverThread, tmp_path: Path, workload: str,
        interval: tuple[str, str]) -> None:
    dpone = Dpone(bind_registry(tmp_path, receiver.base_url), tmp_path / "state")
    preview = _preview(dpone, workload, interval)
    assert _received(receiver) == []  # the preview sent nothing

    delivered = dpone.deliver(workload, interval, "--wait", "--format", "json")

    assert delivered.code == 0, delivered.err
    received = _received(receiver)
    assert len(received) == len(preview["requests"]) == preview["children_total"] >= 2
    for shown, got in zip(preview["requests"], received, strict=True):
        assert (shown["method"], shown["path"]) == (got["method"], got["path"])
        assert _wire([(h["name"], h["value"]) for h in shown["headers"]]) == _wire(got["headers"])
        assert (shown["body_bytes"], shown["body_digest"]) == (got["body_bytes"],
                                                               got["body_digest"])
        [credential] = [h for h in shown["headers"] if h["credential"]]
        assert (credential["name"], credential["value"]) == ("Authorization", REFERENCE)
        assert ["authorization", "<redacted>"] in got["headers"]
    # The store the delivery sealed into holds every request: read from it, nothing changes.
    store = dpone.state / "artifacts"
    before = _tree(store)
    again = dpone("preview", str(dpone.registry / "workloads" / f"{workload}.yaml"),
                  "--registry", str(dpone.registry), "--interval-start", interval[0],
                  "--interval-end", interval[1], "--artifacts", str(store), "--format", "json")
    assert again.code == 0 and "warning" not in again.err, again.err
    assert again.json()["requests"] == preview["requests"]
    assert _tree(store) == before


def test_one_child_with_a_sample_of_its_records(tmp_path: Path) -> None:
    dpone = Dpone(bind_registry(tmp_path, "http://127.0.0.1:9"), tmp_path / "state")
    preview = _preview(dpone, "measurements_async", TWO_ASYNC_CHILDREN, "--child", "2",
                       "--sample", "3")
    [request] = preview["requests"]
    assert request["ordinal"] == 2 and preview["children_total"] == 2
    assert len(request["sample"]) == 3
    assert {record["business_date"] for record in request["sample"]} == {"2026-08-04"}
    assert request["keys"]["carried_in"] == "payload filename"
    assert request["receipt"]["poll"] == "GET /mock/v1/dataset-jobs/{receipt.id}"
    assert request["content_encoding"] == "gzip"
    assert "sample" not in _preview(dpone, "measurements_async", TWO_ASYNC_CHILDREN)[
        "requests"][0]


@pytest.mark.parametrize(("args", "message"), [
    (("--child", "3"), "--child 3: the boundary has 2 child(ren)"),
    (("--artifacts", "s3://bucket/prefix"), "is a remote store: a preview reads no network"),
], ids=["no-such-child", "remote-store"])
def test_a_wrong_argument_exits_2(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    dpone = Dpone(bind_registry(tmp_path, "http://127.0.0.1:9"), tmp_path / "state")
    run = dpone("preview", str(dpone.registry / "workloads" / "measurements_async.yaml"),
                "--registry", str(dpone.registry), "--interval-start", TWO_ASYNC_CHILDREN[0],
                "--interval-end", TWO_ASYNC_CHILDREN[1], *args)
    assert run.code == 2
    assert message in run.err and "hint:" in run.err


def _denied_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "deny-network"
    site.mkdir()
    (site / "sitecustomize.py").write_text(DENY_NETWORK, "utf-8")
    return {**os.environ, "PYTHONPATH": str(site), TOKEN_ENV: TOKEN, "NO_COLOR": "1"}


def test_no_network_and_no_credential_in_any_format(tmp_path: Path) -> None:
    env = _denied_env(tmp_path)
    dpone = str(Path(sys.executable).parent / "dpone")
    probe = subprocess.run([sys.executable, "-c", "import socket; "
                            "socket.create_connection(('127.0.0.1', 9))"],
                           env=env, capture_output=True, text=True, check=False)
    assert "network denied in this test" in probe.stderr  # the denial is in force
    workload = str(EXAMPLES / "workloads" / "measurements_async.yaml")
    before = sorted(EXAMPLES.rglob("*"))
    for fmt in ("text", "json", "curl", "har"):
        ran = subprocess.run([dpone, "preview", workload, "--registry", str(EXAMPLES),
                              "--interval-start", TWO_ASYNC_CHILDREN[0], "--interval-end",
                              TWO_ASYNC_CHILDREN[1], "--sample", "2", "--format", fmt],
                             env=env, capture_output=True, text=True, check=False,
                             cwd=tmp_path)
        assert ran.returncode == 0, (fmt, ran.stderr)
        assert TOKEN not in ran.stdout + ran.stderr
        shown = f"${TOKEN_ENV}" if fmt == "curl" else REFERENCE
        assert shown in ran.stdout, fmt
    assert sorted(EXAMPLES.rglob("*")) == before  # nothing left behind in the registry


def test_har_is_a_har_1_2_log(tmp_path: Path) -> None:
    dpone = Dpone(bind_registry(tmp_path, "http://127.0.0.1:9"), tmp_path / "state")
    run = dpone("preview", str(dpone.registry / "workloads" / "measurements_sync.yaml"),
                "--registry", str(dpone.registry), "--interval-start", SYNC_TWO_WEEKS[0],
                "--interval-end", SYNC_TWO_WEEKS[1], "--format", "har")
    log = json.loads(run.out)["log"]
    assert log["version"] == "1.2" and log["creator"]["name"] == "dpone"
    assert len(log["entries"]) == 2
    for entry in log["entries"]:
        assert set(entry) >= {"startedDateTime", "time", "request", "response", "cache",
                              "timings"}
        request = entry["request"]
        assert set(request) >= {"method", "url", "httpVersion", "cookies", "headers",
                                "queryString", "postData", "headersSize", "bodySize"}
        assert request["postData"]["text"].count("\n") > 0  # NDJSON is inlined as text
        assert {"name": "Authorization", "value": REFERENCE} in request["headers"]


def test_the_curl_commands_deliver_what_the_preview_shows(
        receiver: ReceiverThread, tmp_path: Path) -> None:
    dpone = Dpone(bind_registry(tmp_path, receiver.base_url), tmp_path / "state")
    bodies = tmp_path / "bodies"
    run = dpone("preview", str(dpone.registry / "workloads" / "measurements_async.yaml"),
                "--registry", str(dpone.registry), "--interval-start", TWO_ASYNC_CHILDREN[0],
                "--interval-end", TWO_ASYNC_CHILDREN[1], "--body-dir", str(bodies),
                "--format", "curl")
    assert run.code == 0 and TOKEN not in run.out

    ran = subprocess.run(["bash", "-e", "-c", run.out.replace("\\\n", " ") + "\n"],
                         env={**os.environ, TOKEN_ENV: TOKEN}, capture_output=True, text=True,
                         check=False)

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count('"job_id"') == 2
    preview = _preview(dpone, "measurements_async", TWO_ASYNC_CHILDREN)
    received = _received(receiver)
    assert [r["body_digest"] for r in received] == [
        r["body_digest"] for r in preview["requests"]]


def test_curl_after_seal_reads_the_sealed_payloads_and_the_store_never_changes(
        receiver: ReceiverThread, tmp_path: Path) -> None:
    dpone = Dpone(bind_registry(tmp_path, receiver.base_url), tmp_path / "state")
    workload = str(dpone.registry / "workloads" / "measurements_sync.yaml")
    store = tmp_path / "sealed"
    boundary = ("--registry", str(dpone.registry), "--interval-start", SYNC_TWO_WEEKS[0],
                "--interval-end", SYNC_TWO_WEEKS[1])
    assert dpone("seal", workload, *boundary, "--artifacts", str(store)).code == 0
    before = _tree(store)

    run = dpone("preview", workload, *boundary, "--artifacts", str(store), "--format", "curl")

    assert run.code == 0 and "warning" not in run.err, run.err
    assert _tree(store) == before
    assert run.out.count(f"--data-binary @{store}/payloads/sha256/") == 2
    assert "--body-dir" not in run.out  # every body is a sealed payload file
    ran = subprocess.run(["bash", "-e", "-c", run.out.replace("\\\n", " ") + "\n"],
                         env={**os.environ, TOKEN_ENV: TOKEN}, capture_output=True, text=True,
                         check=False)
    assert ran.returncode == 0 and ran.stdout.count('"batch_id"') == 2, ran.stderr
    assert [r["body_digest"] for r in _received(receiver)] == [
        r["body_digest"] for r in _preview(dpone, "measurements_sync", SYNC_TWO_WEEKS)["requests"]]

    later = dpone("preview", workload, "--registry", str(dpone.registry), "--interval-start",
                  SYNC_TWO_WEEKS[0], "--interval-end", "2026-08-22", "--artifacts", str(store))

    assert later.code == 0
    assert f"warning: --artifacts {store} does not hold this boundary" in later.err
    assert _tree(store) == before
