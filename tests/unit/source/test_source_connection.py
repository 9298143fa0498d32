"""source_dsn: a PostgreSQL source's DSN from ``DPONE_CONN_<REF>_DSN`` or ``_DSN_FILE`` (a mounted
Secret), named like the HTTP credentials; every refusal is ``credential.unavailable`` (exit 3)
naming the variables and never the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.contracts import DponeError
from dpone.contracts.plan import ResolvedSource
from dpone.contracts.secret import Secret
from dpone.executor.source import source_dsn
from dpone.executor.transport._credentials import MAX_CREDENTIAL_FILE_BYTES

SENTINEL = "postgresql://reader:pw-sentinel-41@db.internal:5432/warehouse"
SOURCE = ResolvedSource(type="postgres", connection_ref="warehouse.eu-1", table="measurements")
DIRECT, FROM_FILE = "DPONE_CONN_WAREHOUSE_EU_1_DSN", "DPONE_CONN_WAREHOUSE_EU_1_DSN_FILE"


def _refusal(env: dict[str, str]) -> DponeError:
    with pytest.raises(DponeError) as caught:
        source_dsn(SOURCE, env)
    error = caught.value
    assert error.code == "credential.unavailable" and error.exit_code == 3
    assert SENTINEL not in str(error) and SENTINEL not in repr(error.to_document())
    assert "pw-sentinel" not in str(error.to_document())
    return error


def test_the_dsn_comes_from_the_connection_refs_variable_as_a_secret() -> None:
    dsn = source_dsn(SOURCE, {DIRECT: SENTINEL})
    assert isinstance(dsn, Secret) and dsn.reveal() == SENTINEL
    assert SENTINEL not in repr(dsn) and SENTINEL not in f"{dsn}"


def test_the_dsn_comes_from_a_mounted_secret_file(tmp_path: Path) -> None:
    secret = tmp_path / "dsn"
    secret.write_text(SENTINEL + "\n", encoding="utf-8")
    dsn = source_dsn(SOURCE, {FROM_FILE: str(secret)})
    assert dsn is not None and dsn.reveal() == SENTINEL


def test_a_file_source_needs_no_credential() -> None:
    file_source = ResolvedSource(type="file", format="csv", registry_path="data/m.csv")
    assert source_dsn(file_source, {}) is None


def test_neither_variable_names_both_and_the_fix() -> None:
    error = _refusal({"DPONE_CONN_WAREHOUSE_DSN": SENTINEL})  # another ref's variable
    assert DIRECT in error.message and FROM_FILE in error.message
    assert error.details == {"connection_ref": "warehouse.eu-1", "variables": [DIRECT, FROM_FILE]}
    assert DIRECT in error.fix_hint and FROM_FILE in error.fix_hint


def test_both_variables_at_once_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "dsn"
    secret.write_text(SENTINEL, encoding="utf-8")
    error = _refusal({DIRECT: SENTINEL, FROM_FILE: str(secret)})
    assert "set only one" in error.message


@pytest.mark.parametrize("content", [
    None,                                              # no such file
    b"",                                               # empty
    SENTINEL.encode() + b"\xff",                       # not UTF-8
    b"x" * (MAX_CREDENTIAL_FILE_BYTES + 1),            # too large
    SENTINEL.encode() + b"\n\n",                       # a control character is left
])
def test_an_unusable_secret_file_is_refused_naming_its_variable(tmp_path: Path,
                                                               content: bytes | None) -> None:
    secret = tmp_path / "dsn"
    if content is not None:
        secret.write_bytes(content)
    error = _refusal({FROM_FILE: str(secret)})
    assert FROM_FILE in error.message


def test_a_control_character_in_the_variable_is_refused() -> None:
    error = _refusal({DIRECT: SENTINEL + "\r\nhost=elsewhere"})
    assert DIRECT in error.message
