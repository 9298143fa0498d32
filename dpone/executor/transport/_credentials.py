"""Resolve a binding's ``credential_ref`` into a :class:`Credential`, per process, never persisted.

Reference forms (``ConnectionBinding.credential_ref``):

``env:NAME``
    one value from the environment. Single-field providers (bearer, api_key_header) take it as
    the token; ``basic`` and ``oauth2_client_credentials`` read ``user:password`` /
    ``client_id:client_secret`` (split at the first colon); ``mtls`` reads the path of one PEM
    file holding the client certificate and its key.
``file:/path``
    the same, read from a file (UTF-8, at most 64 KiB, one trailing newline stripped); for
    ``mtls`` the file itself is the combined PEM.
``conn:REF``
    one environment variable per field: ``DPONE_CONN_<REF>_TOKEN``, ``_USERNAME``/``_PASSWORD``,
    ``_CLIENT_ID``/``_CLIENT_SECRET``, ``_CERT_FILE`` and optionally ``_KEY_FILE``
    (:func:`conn_variable` names them: REF upper-cased, every other character than A-Z and 0-9
    written ``_``; a PostgreSQL source's connection ref uses the same scheme).
``vault://MOUNT/PATH#FIELD``
    one field of a HashiCorp Vault KV v2 secret holding what ``env:`` would hold (a token,
    ``user:password``, ``client_id:client_secret``, or the path of the mTLS PEM).
``vault://MOUNT/PATH``
    the secret's fields named like ``conn:``'s, lower-case: ``token``, ``username`` and
    ``password``, ``client_id`` and ``client_secret``, ``cert_file`` (and optionally
    ``key_file``). The Vault server and login come from the environment
    (:mod:`dpone.executor.transport._vault`).

Every refusal is ``DponeError(code="credential.unavailable")``; messages name the reference,
never a value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from dpone.contracts import DponeError
from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.secret import Credential, Secret
from dpone.executor.transport._vault import parse_vault_reference, read_vault_secret

MAX_CREDENTIAL_FILE_BYTES: Final = 65_536

PROVIDER_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "bearer": ("token",),
    "api_key_header": ("token",),
    "basic": ("username", "password"),
    "oauth2_client_credentials": ("client_id", "client_secret"),
    "mtls": ("cert_file",),
    "none": (),
}
_OPTIONAL_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {"mtls": ("key_file",)}
_PAIRED: Final = frozenset({"basic", "oauth2_client_credentials"})
_NOT_NAME_CHARACTER: Final = re.compile(r"[^A-Z0-9]")


def conn_variable(ref: str, field: str) -> str:
    """``DPONE_CONN_<REF>_<FIELD>``: the environment variable of one field of connection ``ref``
    (``conn:`` prefix optional). REF and FIELD are upper-cased and every character other than
    A-Z and 0-9 becomes ``_`` (``warehouse.eu-1`` -> ``DPONE_CONN_WAREHOUSE_EU_1_<FIELD>``), so
    every reference names a variable a shell or a Kubernetes manifest can set."""
    name = _NOT_NAME_CHARACTER.sub("_", ref.removeprefix("conn:").upper())
    return f"DPONE_CONN_{name}_{_NOT_NAME_CHARACTER.sub('_', field.upper())}"


class EnvironmentCredentialResolver:
    """Resolves ``env:``, ``file:`` and ``conn:`` references against one environment mapping."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env: Mapping[str, str] = os.environ if env is None else env

    def resolve(self, binding: ConnectionBinding) -> Credential:
        return resolve_credentials(binding, env=self._env)


def resolve_credentials(binding: ConnectionBinding, env: Mapping[str, str] = os.environ) -> Credential:
    """The credential of ``binding`` (see the module docstring for the reference forms)."""
    provider = binding.auth_provider
    if provider == "none":
        return Credential(provider, {})
    ref = binding.credential_ref
    if ref is None:
        raise _unavailable(f"binding {binding.id!r} uses {provider} but names no credential_ref")
    if ref.startswith("vault://"):
        fields = _from_vault(ref, provider, env)
    elif ref.startswith("conn:"):
        fields = _from_conn(ref, provider, env)
    elif ref.startswith("env:"):
        name = ref.removeprefix("env:")
        value = env.get(name)
        if value is None or value == "":
            raise _unavailable(f"environment variable {name} is not set or empty", ref=ref)
        fields = _split_single(ref, provider, value)
    elif ref.startswith("file:"):
        path = ref.removeprefix("file:")
        fields = ({"cert_file": path} if provider == "mtls"
                  else _split_single(ref, provider, read_credential_file(ref, Path(path))))
    else:
        raise _unavailable("credential_ref must be env:, file:, conn: or vault://", ref=ref)
    return checked_credential(ref, provider, fields)


def checked_credential(ref: str, provider: str, fields: Mapping[str, str]) -> Credential:
    """The credential of ``fields`` found for ``ref`` by any source (this module's, or a host's
    such as an orchestrator's connections), each value checked as this module checks its own."""
    for name, value in fields.items():
        _check_value(ref, provider, name, value)
    return Credential(provider, {name: Secret(value) for name, value in fields.items()})


def _from_conn(ref: str, provider: str, env: Mapping[str, str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for name in PROVIDER_FIELDS[provider]:
        variable = conn_variable(ref, name)
        value = env.get(variable)
        if not value:
            raise _unavailable(f"environment variable {variable} is not set or empty", ref=ref)
        fields[name] = value
    for name in _OPTIONAL_FIELDS.get(provider, ()):
        value = env.get(conn_variable(ref, name))
        if value:
            fields[name] = value
    return fields


def _from_vault(ref: str, provider: str, env: Mapping[str, str]) -> dict[str, str]:
    secret = read_vault_secret(ref, env, required=PROVIDER_FIELDS[provider],
                               optional=_OPTIONAL_FIELDS.get(provider, ()))
    if parse_vault_reference(ref).field is not None:
        [value] = secret.values()
        return _split_single(ref, provider, value.reveal())
    return {name: value.reveal() for name, value in secret.items()}


def _split_single(ref: str, provider: str, value: str) -> dict[str, str]:
    names = PROVIDER_FIELDS[provider]
    if provider not in _PAIRED:
        return {names[0]: value}
    first, colon, second = value.partition(":")
    if not colon or not first or not second:
        raise _unavailable(f"{provider} through one value needs '{names[0]}:{names[1]}'", ref=ref)
    return {names[0]: first, names[1]: second}


def read_credential_file(ref: str, path: Path) -> str:
    """The text of a mounted secret file: UTF-8, at most ``MAX_CREDENTIAL_FILE_BYTES``, one
    trailing newline stripped; ``credential.unavailable`` naming ``ref`` (never the text)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CREDENTIAL_FILE_BYTES + 1)
    except OSError as exc:
        raise _unavailable(f"credential file cannot be read ({exc.strerror or 'error'})",
                           ref=ref) from None
    if len(raw) > MAX_CREDENTIAL_FILE_BYTES:
        raise _unavailable(f"credential file exceeds {MAX_CREDENTIAL_FILE_BYTES} bytes", ref=ref)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _unavailable("credential file is not UTF-8", ref=ref) from None
    if text.endswith("\r\n"):
        text = text[:-2]
    elif text.endswith("\n"):
        text = text[:-1]
    if not text:
        raise _unavailable("credential file is empty", ref=ref)
    return text


def _check_value(ref: str, provider: str, name: str, value: str) -> None:
    """Refuse values that could not travel in a header (and would echo in a library error)."""
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise _unavailable(f"{provider} field {name!r} contains a control character", ref=ref)
    if name == "token" and (not value.isascii() or value != value.strip()):
        raise _unavailable(f"{provider} token must be printable ASCII without surrounding space",
                           ref=ref)
    if name == "username" and ":" in value:
        raise _unavailable("basic username cannot contain ':'", ref=ref)


def _unavailable(message: str, *, ref: str | None = None) -> DponeError:
    details = {"credential_ref": ref} if ref is not None else {}
    return DponeError(code="credential.unavailable", message=message, details=details)
