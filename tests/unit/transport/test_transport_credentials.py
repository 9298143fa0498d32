"""resolve_credentials: env:, file:, conn: (DPONE_CONN_<REF>_<FIELD>); vault:// in test_transport_vault."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.contracts import DponeError
from dpone.executor.transport import EnvironmentCredentialResolver, resolve_credentials
from dpone.executor.transport._credentials import conn_variable
from support.transport import SENTINEL, binding


def _reveal(provider: str, ref: str, env: dict[str, str]) -> dict[str, str]:
    credential = resolve_credentials(binding(provider=provider, credential_ref=ref), env=env)
    assert credential.provider == provider
    return {name: credential.secret(name).reveal() for name in credential.field_names}


def test_env_reference_gives_the_token() -> None:
    assert _reveal("bearer", "env:RECEIVER_TOKEN", {"RECEIVER_TOKEN": SENTINEL}) == {"token": SENTINEL}
    assert _reveal("api_key_header", "env:K", {"K": SENTINEL}) == {"token": SENTINEL}


def test_env_reference_splits_pairs_at_the_first_colon() -> None:
    assert _reveal("basic", "env:B", {"B": "user:pa:ss"}) == {"username": "user", "password": "pa:ss"}
    assert _reveal("oauth2_client_credentials", "env:O", {"O": "cid:" + SENTINEL}) == {
        "client_id": "cid", "client_secret": SENTINEL}


def test_file_reference_strips_exactly_one_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_bytes(SENTINEL.encode() + b"\n")
    assert _reveal("bearer", f"file:{path}", {}) == {"token": SENTINEL}
    path.write_bytes(SENTINEL.encode() + b"\r\n")
    assert _reveal("bearer", f"file:{path}", {}) == {"token": SENTINEL}
    path.write_bytes(SENTINEL.encode() + b"\n\n")
    with pytest.raises(DponeError) as caught:
        _reveal("bearer", f"file:{path}", {})
    assert caught.value.code == "credential.unavailable"
    assert SENTINEL not in str(caught.value)


def test_file_reference_for_mtls_is_the_pem_path(tmp_path: Path) -> None:
    pem = tmp_path / "client.pem"
    assert _reveal("mtls", f"file:{pem}", {}) == {"cert_file": str(pem)}


@pytest.mark.parametrize(("provider", "fields"), [
    ("bearer", {"TOKEN": "token"}),
    ("api_key_header", {"TOKEN": "token"}),
    ("basic", {"USERNAME": "username", "PASSWORD": "password"}),
    ("oauth2_client_credentials", {"CLIENT_ID": "client_id", "CLIENT_SECRET": "client_secret"}),
    ("mtls", {"CERT_FILE": "cert_file", "KEY_FILE": "key_file"}),
])
def test_conn_reference_reads_one_variable_per_field(provider: str, fields: dict[str, str]) -> None:
    env = {f"DPONE_CONN_RECEIVER_A_{suffix}": f"v-{suffix.lower()}" for suffix in fields}
    expected = {name: f"v-{suffix.lower()}" for suffix, name in fields.items()}
    assert _reveal(provider, "conn:receiver_a", env) == expected


def test_conn_reference_names_the_missing_variable() -> None:
    with pytest.raises(DponeError) as caught:
        _reveal("basic", "conn:rx", {"DPONE_CONN_RX_USERNAME": "u"})
    assert caught.value.code == "credential.unavailable"
    assert "DPONE_CONN_RX_PASSWORD" in caught.value.message


def test_vault_reference_without_a_vault_server_is_unavailable_with_the_catalog_hint() -> None:
    with pytest.raises(DponeError) as caught:
        _reveal("bearer", "vault://kv/receiver/token", {})
    error = caught.value
    assert error.code == "credential.unavailable"
    assert error.exit_code == 3
    assert "VAULT_ADDR is not set" in error.message
    assert "DPONE_CONN_<REF>_<FIELD> or vault://" in error.fix_hint


@pytest.mark.parametrize(("provider", "ref", "env"), [
    ("bearer", "env:MISSING", {}),
    ("bearer", "env:EMPTY", {"EMPTY": ""}),
    ("bearer", "file:/nonexistent/dpone/token", {}),
    ("basic", "env:B", {"B": "no-colon-" + SENTINEL}),
    ("bearer", "env:T", {"T": SENTINEL + "\nX-Injected: 1"}),
    ("bearer", "env:T", {"T": " " + SENTINEL}),
    ("basic", "conn:c", {"DPONE_CONN_C_USERNAME": "a:b", "DPONE_CONN_C_PASSWORD": SENTINEL}),
])
def test_unusable_references_refuse_without_echoing_values(provider: str, ref: str,
                                                           env: dict[str, str]) -> None:
    with pytest.raises(DponeError) as caught:
        _reveal(provider, ref, env)
    error = caught.value
    assert error.code == "credential.unavailable"
    assert SENTINEL not in str(error) and SENTINEL not in repr(error)
    assert SENTINEL not in repr(error.to_document())


def test_missing_reference_and_provider_none() -> None:
    with pytest.raises(DponeError, match="names no credential_ref"):
        resolve_credentials(binding(credential_ref=None), env={})
    none = resolve_credentials(binding(provider="none", credential_ref=None), env={})
    assert none.field_names == ()


def test_oversized_credential_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"a" * 70_000)
    with pytest.raises(DponeError, match="exceeds"):
        _reveal("bearer", f"file:{path}", {})


def test_resolver_port_uses_its_environment() -> None:
    resolver = EnvironmentCredentialResolver({"RECEIVER_TOKEN": SENTINEL})
    assert resolver.resolve(binding()).secret("token").reveal() == SENTINEL


def test_conn_variable_names_a_variable_a_shell_can_set() -> None:
    """REF upper-cased, every character other than A-Z and 0-9 written `_`: a binding's
    ``conn:`` reference ([A-Za-z0-9_]) keeps its name, and a PostgreSQL source's connection ref
    (a dotted name such as ``warehouse.eu-1``) names a variable a shell can set."""
    assert conn_variable("conn:receiver_a", "client_secret") == "DPONE_CONN_RECEIVER_A_CLIENT_SECRET"
    assert conn_variable("warehouse.eu-1", "dsn_file") == "DPONE_CONN_WAREHOUSE_EU_1_DSN_FILE"
