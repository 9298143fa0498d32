"""A loopback fake of the HashiCorp Vault HTTP API parts dpone uses: KV version 2 reads
(``GET /v1/MOUNT/data/PATH``) and Kubernetes login (``POST /v1/auth/MOUNT/login``), with the
status codes and JSON envelopes Vault answers. The real hvac client talks to it.

:func:`vault_server` starts a real ``vault server -dev`` instead when the binary is on PATH.
Every refusal of the fake carries ``ERROR_TEXT`` in Vault's ``errors`` list, so a test can prove Vault's own
error text never reaches a message. ``redirect_to`` makes every answer a 307 to another origin.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from support.common import free_port

VAULT_TOKEN: Final = f"hvs.vault-sentinel-{secrets.token_hex(12)}"
"""The Vault token tests log in with: a searchable sentinel like the receiver's token."""
K8S_JWT: Final = f"eyJk8s-jwt-sentinel-{secrets.token_hex(12)}"
ERROR_TEXT: Final = f"vault-error-text-{secrets.token_hex(6)}"


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class VaultState:
    """What the fake serves: ``secrets[(mount, path)] = {field: value}``; tokens it accepts;
    Kubernetes roles (``roles[(mount, role)] = jwt``) and the token each login issues."""

    secrets: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    tokens: set[str] = field(default_factory=lambda: {VAULT_TOKEN})
    roles: dict[tuple[str, str], str] = field(default_factory=dict)
    issued: str = field(default_factory=lambda: f"hvs.k8s-issued-sentinel-{secrets.token_hex(8)}")
    kv_version: int = 2
    redirect_to: str | None = None
    seen: list[SeenRequest] = field(default_factory=list)


class FakeVault:
    """``with FakeVault() as vault: vault.url``: a threaded HTTP server on 127.0.0.1."""

    def __init__(self, state: VaultState | None = None) -> None:
        self.state = state or VaultState()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._stopped = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def put(self, mount: str, path: str, **fields: Any) -> None:
        self.state.secrets[(mount, path)] = fields

    def __enter__(self) -> FakeVault:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._server.shutdown()
            self._server.server_close()


def _handler(state: VaultState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _answer(self, status: int, document: dict[str, Any] | None) -> None:
            body = b"" if document is None else json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _refuse(self, status: int) -> None:
            self._answer(status, {"errors": [ERROR_TEXT]})

        def _record(self) -> SeenRequest:
            length = int(self.headers.get("Content-Length") or 0)
            seen = SeenRequest(self.command, self.path, dict(self.headers.items()),
                               self.rfile.read(length))
            state.seen.append(seen)
            return seen

        def _redirected(self) -> bool:
            """Answer 307 to ``state.redirect_to`` when it is set (a redirecting Vault)."""
            if state.redirect_to is None:
                return False
            self.send_response(307)
            self.send_header("Location", state.redirect_to + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return True

        def do_GET(self) -> None:
            seen = self._record()
            if self._redirected():
                return
            parts = seen.path.split("?", 1)[0].split("/")
            # /v1/<mount>/data/<path...>
            if len(parts) < 5 or parts[1] != "v1" or parts[3] != "data":
                self._refuse(404)
                return
            if seen.headers.get("X-Vault-Token") not in state.tokens:
                self._refuse(403)
                return
            values = state.secrets.get((parts[2], "/".join(parts[4:])))
            if values is None:
                self._answer(404, {"errors": []})
                return
            metadata = {"created_time": "2026-11-01T00:00:00Z", "deletion_time": "",
                        "destroyed": False, "version": 1}
            data = {"data": values, "metadata": metadata} if state.kv_version == 2 else values
            self._answer(200, {"request_id": "r-1", "lease_id": "", "renewable": False,
                               "lease_duration": 0, "data": data, "wrap_info": None,
                               "warnings": None, "auth": None})

        def do_POST(self) -> None:
            seen = self._record()
            if self._redirected():
                return
            parts = seen.path.split("/")
            # /v1/auth/<mount>/login
            if len(parts) != 5 or parts[1:3] != ["v1", "auth"] or parts[4] != "login":
                self._refuse(404)
                return
            try:
                login = json.loads(seen.body)
            except ValueError:
                self._refuse(400)
                return
            expected = state.roles.get((parts[3], str(login.get("role"))))
            if expected is None or login.get("jwt") != expected:
                self._refuse(403)
                return
            state.tokens.add(state.issued)
            self._answer(200, {"request_id": "r-2", "lease_id": "", "renewable": False,
                               "lease_duration": 0, "data": None, "wrap_info": None,
                               "warnings": None,
                               "auth": {"client_token": state.issued, "accessor": "a-1",
                                        "policies": ["default"], "lease_duration": 3600,
                                        "renewable": True}})

    return Handler


class DevVault:
    """A real ``vault server -dev`` on loopback (KV v2 mounted at ``secret/``, root token
    :data:`VAULT_TOKEN`), for machines where the ``vault`` binary is on PATH."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        self._log = (workdir / "vault-dev.log").open("wb")
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(workdir)}
        self._process = subprocess.Popen(
            [binary, "server", "-dev", f"-dev-root-token-id={VAULT_TOKEN}",
             f"-dev-listen-address={self.url.removeprefix('http://')}"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=workdir)

    def __enter__(self) -> DevVault:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/v1/sys/health", timeout=2) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise AssertionError("the Vault dev server did not become healthy within 60 s")

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def put(self, mount: str, path: str, **fields: Any) -> None:
        request = urllib.request.Request(
            f"{self.url}/v1/{mount}/data/{path}", method="POST",
            data=json.dumps({"data": fields}).encode(),
            headers={"X-Vault-Token": VAULT_TOKEN, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200, answer.status

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log.close()


@contextlib.contextmanager
def vault_server(workdir: Path) -> Iterator[FakeVault | DevVault]:
    """A real Vault dev server when ``vault`` is on PATH, else the loopback fake of its API."""
    binary = shutil.which("vault")
    server: FakeVault | DevVault = DevVault(binary, workdir) if binary else FakeVault()
    with server as running:
        yield running
