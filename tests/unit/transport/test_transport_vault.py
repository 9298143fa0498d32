"""vault://MOUNT/PATH[#FIELD] through the real hvac client against a loopback fake of Vault's
KV v2 and Kubernetes-login API (tests/support/vault.py): token, token-file and Kubernetes
login, the field conventions of every provider, and every refusal as credential.unavailable
naming the reference and the Vault address, never a value, a token or Vault's error text."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import pytest

from dpone.contracts import DponeError
from dpone.executor.transport import resolve_credentials
from support.transport import SENTINEL, binding
from support.vault import ERROR_TEXT, K8S_JWT, VAULT_TOKEN, FakeVault

SECRETS = (SENTINEL, VAULT_TOKEN, K8S_JWT, ERROR_TEXT)


@pytest.fixture
def vault(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeVault]:
    # hvac's own fallbacks must not be what makes a test pass: a decoy token in the process
    # environment and in ~/.vault-token, and proxy variables pointing nowhere.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".vault-token").write_text("hvs.decoy-home-token\n")
    monkeypatch.setenv("VAULT_TOKEN", "hvs.decoy-process-token")
    with FakeVault() as running:
        running.put("secret", "dpone/receiver", token=SENTINEL)
        running.put("secret", "dpone/basic", username="alice", password=SENTINEL)
        running.put("secret", "dpone/pair", value="alice:" + SENTINEL, token=SENTINEL)
        running.put("kv", "teams/a/oauth", client_id="client-1", client_secret=SENTINEL)
        running.put("kv", "mtls", cert_file="/run/pem/client.pem", key_file="/run/pem/key.pem")
        yield running


def _env(vault: FakeVault, **more: str) -> dict[str, str]:
    return {"VAULT_ADDR": vault.url, "VAULT_TOKEN": VAULT_TOKEN, **more}


def _reveal(provider: str, ref: str, env: dict[str, str]) -> dict[str, str]:
    credential = resolve_credentials(binding(provider=provider, credential_ref=ref), env=env)
    assert credential.provider == provider
    return {name: credential.secret(name).reveal() for name in credential.field_names}


def _refusal(provider: str, ref: str, env: dict[str, str]) -> DponeError:
    with pytest.raises(DponeError) as caught:
        _reveal(provider, ref, env)
    error = caught.value
    assert error.code == "credential.unavailable" and error.exit_code == 3
    assert error.details["credential_ref"] == ref
    shown = [str(error), repr(error), error.message, repr(error.details), error.fix_hint,
             "".join(traceback.format_exception(error))]
    assert not [s for s in SECRETS if any(s in text for text in shown)], shown
    return error


def test_a_field_reference_reads_kv_v2_with_the_vault_token(vault: FakeVault) -> None:
    assert _reveal("bearer", "vault://secret/dpone/receiver#token", _env(vault)) == {
        "token": SENTINEL}
    [read] = vault.state.seen
    assert (read.method, read.path) == ("GET", "/v1/secret/data/dpone/receiver")
    assert read.headers["X-Vault-Token"] == VAULT_TOKEN


@pytest.mark.parametrize(("provider", "ref", "expected"), [
    ("bearer", "vault://secret/dpone/receiver", {"token": SENTINEL}),
    ("api_key_header", "vault://secret/dpone/receiver", {"token": SENTINEL}),
    ("basic", "vault://secret/dpone/basic", {"username": "alice", "password": SENTINEL}),
    ("basic", "vault://secret/dpone/pair#value", {"username": "alice", "password": SENTINEL}),
    ("oauth2_client_credentials", "vault://kv/teams/a/oauth",
     {"client_id": "client-1", "client_secret": SENTINEL}),
    ("mtls", "vault://kv/mtls", {"cert_file": "/run/pem/client.pem",
                                 "key_file": "/run/pem/key.pem"}),
    ("mtls", "vault://kv/mtls#cert_file", {"cert_file": "/run/pem/client.pem"}),
])
def test_every_provider_reads_its_fields_or_one_named_field(
        vault: FakeVault, provider: str, ref: str, expected: dict[str, str]) -> None:
    assert _reveal(provider, ref, _env(vault)) == expected


def test_a_token_file_is_read_and_its_trailing_newline_stripped(vault: FakeVault,
                                                                tmp_path: Path) -> None:
    token_file = tmp_path / "vault-token"
    token_file.write_text(VAULT_TOKEN + "\n")
    env = {"VAULT_ADDR": vault.url, "VAULT_TOKEN_FILE": str(token_file)}
    assert _reveal("bearer", "vault://secret/dpone/receiver#token", env) == {"token": SENTINEL}
    assert vault.state.seen[0].headers["X-Vault-Token"] == VAULT_TOKEN


def test_kubernetes_login_exchanges_the_service_account_jwt(vault: FakeVault,
                                                            tmp_path: Path) -> None:
    jwt_file = tmp_path / "sa-token"
    jwt_file.write_text(K8S_JWT)
    vault.state.roles[("k8s-eu", "dpone-executor")] = K8S_JWT
    env = {"VAULT_ADDR": vault.url, "VAULT_K8S_ROLE": "dpone-executor",
           "VAULT_K8S_TOKEN_FILE": str(jwt_file), "VAULT_K8S_MOUNT": "k8s-eu"}

    assert _reveal("bearer", "vault://secret/dpone/receiver", env) == {"token": SENTINEL}

    login, read = vault.state.seen
    assert (login.method, login.path) == ("POST", "/v1/auth/k8s-eu/login")
    assert "X-Vault-Token" not in login.headers  # no decoy from the process or ~/.vault-token
    assert read.headers["X-Vault-Token"] == vault.state.issued


def test_kubernetes_login_reads_the_default_service_account_path() -> None:
    default = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
    if default.exists():
        pytest.skip("this machine runs in a Kubernetes pod")
    error = _refusal("bearer", "vault://secret/dpone/receiver#token",
                     {"VAULT_ADDR": "https://vault.example.test", "VAULT_K8S_ROLE": "r"})
    assert f"({default}) cannot be read" in error.message


@pytest.mark.parametrize(("ref", "why"), [
    ("vault://secret/dpone/missing#token", "answered 404"),
    ("vault://secret/dpone/receiver#absent", "no non-empty string field 'absent'"),
    ("vault://secret/dpone/basic", "no non-empty string field 'token'"),
])
def test_a_missing_secret_or_field_is_unavailable(vault: FakeVault, ref: str, why: str) -> None:
    error = _refusal("bearer", ref, _env(vault))
    assert why in error.message
    assert error.details["vault_addr"] == vault.url and vault.url in error.message


def test_a_refused_vault_token_is_unavailable_without_vault_error_text(vault: FakeVault) -> None:
    error = _refusal("bearer", "vault://secret/dpone/receiver#token",
                     _env(vault, VAULT_TOKEN="hvs.wrong-token"))
    assert "answered 403" in error.message
    assert error.details["vault_status"] == 403


def test_a_refused_kubernetes_login_is_unavailable(vault: FakeVault, tmp_path: Path) -> None:
    jwt_file = tmp_path / "sa-token"
    jwt_file.write_text(K8S_JWT)
    env = {"VAULT_ADDR": vault.url, "VAULT_K8S_ROLE": "unknown-role",
           "VAULT_K8S_TOKEN_FILE": str(jwt_file)}
    error = _refusal("bearer", "vault://secret/dpone/receiver#token", env)
    assert "Kubernetes login failed: Vault answered 403" in error.message
    assert [seen.method for seen in vault.state.seen] == ["POST"]  # no read without a login


def test_a_kv_version_1_mount_is_refused(vault: FakeVault) -> None:
    vault.state.kv_version = 1
    error = _refusal("bearer", "vault://secret/dpone/receiver", _env(vault))
    assert "KV version 2" in error.message


@pytest.mark.parametrize(("env", "why"), [
    ({}, "VAULT_ADDR is not set"),
    ({"VAULT_ADDR": "ftp://vault.example.test"}, "VAULT_ADDR must be https://host[:port]"),
    ({"VAULT_ADDR": "https://vault.example.test/v1/secret"}, "VAULT_ADDR must be https://"),
    ({"VAULT_ADDR": "https://user:pw@vault.example.test"}, "VAULT_ADDR must be https://"),
    ({"VAULT_ADDR": "http://vault.example.test:8200", "VAULT_TOKEN": VAULT_TOKEN},
     "must use https"),
    ({"VAULT_ADDR": "https://vault.example.test"}, "no Vault login configured"),
    ({"VAULT_ADDR": "https://vault.example.test", "VAULT_TOKEN": VAULT_TOKEN,
      "VAULT_K8S_ROLE": "r"}, "more than one Vault login configured (VAULT_TOKEN, VAULT_K8S_ROLE)"),
    ({"VAULT_ADDR": "https://vault.example.test", "VAULT_TOKEN_FILE": "/nonexistent/t"},
     "VAULT_TOKEN_FILE (/nonexistent/t) cannot be read"),
    ({"VAULT_ADDR": "https://vault.example.test", "VAULT_K8S_ROLE": "r",
      "VAULT_K8S_TOKEN_FILE": "/nonexistent/jwt"}, "Kubernetes service-account token"),
    ({"VAULT_ADDR": "https://vault.example.test", "VAULT_TOKEN": VAULT_TOKEN + "\n"},
     "printable ASCII"),
])
def test_an_unusable_vault_environment_is_refused_before_any_request(
        env: dict[str, str], why: str) -> None:
    error = _refusal("bearer", "vault://secret/dpone/receiver#token", env)
    assert why in error.message


@pytest.mark.parametrize("ref", [
    "vault://secret", "vault://secret/", "vault://secret/../sys/raw#token",
    "vault://secret/a/./b", "vault://secret/a//b", "vault://secret/a#", "vault://sec%20ret/a",
    "vault://secret/a?version=1", "vault://secret/.hidden", "vault://secret/a#f#g",
])
def test_a_malformed_reference_is_refused(ref: str) -> None:
    error = _refusal("bearer", ref, {"VAULT_ADDR": "https://vault.example.test",
                                     "VAULT_TOKEN": VAULT_TOKEN})
    assert "vault://MOUNT/PATH" in error.message


def test_an_unreachable_vault_is_unavailable(vault: FakeVault) -> None:
    env = _env(vault)
    vault.stop()
    error = _refusal("bearer", "vault://secret/dpone/receiver#token", env)
    assert "KV v2 read failed: server unreachable" in error.message


class _Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, dict[str, str]]] = []

    def _any(self) -> None:
        type(self).seen.append((self.path, dict(self.headers.items())))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_CONNECT = _any

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def elsewhere() -> Iterator[tuple[str, list[tuple[str, dict[str, str]]]]]:
    """Another origin on loopback that records whatever reaches it."""
    seen: list[tuple[str, dict[str, str]]] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_a_redirect_is_never_followed(vault: FakeVault,
                                      elsewhere: tuple[str, list[Any]]) -> None:
    url, seen = elsewhere
    vault.state.redirect_to = url
    error = _refusal("bearer", "vault://secret/dpone/receiver#token", _env(vault))
    assert "answered 307 (redirects are never followed)" in error.message
    assert seen == []  # the Vault token never travelled to the redirect target


def test_proxy_variables_are_ignored(vault: FakeVault, elsewhere: tuple[str, list[Any]],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    url, seen = elsewhere
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert _reveal("bearer", "vault://secret/dpone/receiver#token", _env(vault)) == {
        "token": SENTINEL}
    assert seen == [] and len(vault.state.seen) == 1


def test_nothing_is_written_to_disk_or_logged(vault: FakeVault, tmp_path: Path,
                                              caplog: pytest.LogCaptureFixture,
                                              capfd: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    home = tmp_path / "home"
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    for _ in range(2):
        _reveal("bearer", "vault://secret/dpone/receiver#token", _env(vault))
    with pytest.raises(DponeError):
        _reveal("bearer", "vault://secret/dpone/receiver#token",
                _env(vault, VAULT_TOKEN="hvs.wrong"))
    assert len(vault.state.seen) == 3  # read per resolution: nothing cached
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert (home / ".vault-token").read_text() == "hvs.decoy-home-token\n"
    captured = capfd.readouterr()
    texts = [captured.out, captured.err, caplog.text,
             *(record.getMessage() + repr(record.args) for record in caplog.records)]
    assert not [s for s in SECRETS if any(s in text for text in texts)]


def test_without_hvac_a_vault_reference_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys  # noqa: PLC0415

    monkeypatch.setitem(sys.modules, "hvac", None)
    error = _refusal("bearer", "vault://secret/dpone/receiver#token",
                     {"VAULT_ADDR": "https://vault.example.test", "VAULT_TOKEN": VAULT_TOKEN})
    assert "dpone[vault]" in error.message

