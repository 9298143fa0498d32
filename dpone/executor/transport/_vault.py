"""``vault://MOUNT/PATH[#FIELD]``: one HashiCorp Vault KV version 2 read per process, via hvac.

The reference names a KV v2 secrets engine mounted at ``MOUNT`` and the secret at ``PATH``
(``GET /v1/MOUNT/data/PATH``, latest version); ``#FIELD`` names one field of that secret.
Segments are letters, digits, ``_``, ``-`` and ``.`` (never ``.``/``..``), so a reference
cannot reach another Vault API.

The Vault server and the way to log in come from this process's environment only:

``VAULT_ADDR``
    ``https://host[:port]``; plain ``http://`` only for a loopback host (a dev server).
``VAULT_TOKEN`` or ``VAULT_TOKEN_FILE``
    token auth (the file as mounted by an agent: UTF-8, one trailing newline stripped).
``VAULT_K8S_ROLE``
    Kubernetes auth instead: the service-account JWT from ``VAULT_K8S_TOKEN_FILE`` (default
    :data:`DEFAULT_K8S_TOKEN_FILE`) is exchanged at ``auth/VAULT_K8S_MOUNT/login`` (mount
    default ``kubernetes``) for a token held by this process only.
``VAULT_CACERT``, ``VAULT_NAMESPACE``, ``VAULT_CLIENT_CERT``/``VAULT_CLIENT_KEY`` (optional)
    the CA bundle that verifies the server (default: certifi's), the Enterprise namespace, a
    client certificate for Vault's TLS (the last two read by hvac itself, as the Vault CLI).

Exactly one way to log in must be configured. hvac's other fallbacks (``~/.vault-token``,
proxy and requests' CA variables, redirects) are switched off: a redirect or a proxy
would carry the Vault token elsewhere. Values come back only as :class:`Secret`; nothing is
written to disk or cached beyond the process's resolved credential. Every failure is
``credential.unavailable`` naming the reference and the Vault address, never a value, a token
or Vault's own error text.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import certifi

from dpone.contracts import DponeError
from dpone.contracts.secret import Secret

DEFAULT_K8S_TOKEN_FILE: Final = "/var/run/secrets/kubernetes.io/serviceaccount/token"
DEFAULT_K8S_MOUNT: Final = "kubernetes"
REQUEST_TIMEOUT_S: Final = 10
MAX_TOKEN_FILE_BYTES: Final = 65_536
_SEGMENT: Final = r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}"
_REFERENCE: Final = re.compile(
    rf"vault://(?P<mount>{_SEGMENT})/(?P<path>{_SEGMENT}(?:/{_SEGMENT}){{0,15}})"
    rf"(?:#(?P<field>{_SEGMENT}))?")
_LOOPBACK_NAMES: Final = frozenset({"localhost"})


@dataclass(frozen=True, slots=True)
class VaultReference:
    """A parsed ``vault://`` reference: KV v2 ``mount``, secret ``path``, optional ``field``."""

    ref: str
    mount: str
    path: str
    field: str | None


def parse_vault_reference(ref: str) -> VaultReference:
    """``ref`` parsed, or ``credential.unavailable`` saying what the form is."""
    match = _REFERENCE.fullmatch(ref)
    if match is None:
        raise _unavailable("a Vault reference is vault://MOUNT/PATH or vault://MOUNT/PATH#FIELD "
                           "(segments of letters, digits, '_', '-' and '.', not starting with '.')", ref=ref)
    return VaultReference(ref, match.group("mount"), match.group("path"), match.group("field"))


def read_vault_secret(ref: str, env: Mapping[str, str], *, required: Sequence[str] = (),
                      optional: Sequence[str] = ()) -> dict[str, Secret]:
    """Fields of the KV v2 secret ``ref`` names, each wrapped in :class:`Secret`: only
    ``#FIELD`` when the reference names one, else every ``required`` field (all must be
    non-empty strings) and the ``optional`` ones present; ``credential.unavailable`` on any
    failure."""
    reference = parse_vault_reference(ref)
    address = vault_address(ref, env)
    login = _login_method(ref, address, env)
    try:
        import hvac  # noqa: PLC0415 - optional: only a vault:// binding needs it
        import requests  # noqa: PLC0415
    except ImportError:
        raise _unavailable("vault:// references need the 'vault' extra (pip install "
                           "'dpone[vault]')", ref=ref, address=address) from None
    session = requests.Session()
    session.trust_env = False  # no proxy, .netrc or CA variables of requests' own
    try:
        client = hvac.Client(url=address, token=login.token.reveal() if login.token else "",
                             verify=env.get("VAULT_CACERT") or certifi.where(),
                             timeout=REQUEST_TIMEOUT_S, proxies={}, allow_redirects=False,
                             session=session, namespace=env.get("VAULT_NAMESPACE") or None)
        if login.k8s_jwt is not None:
            jwt = login.k8s_jwt
            _vault_call(lambda: client.auth.kubernetes.login(
                role=login.k8s_role, jwt=jwt.reveal(),
                use_token=True, mount_point=login.k8s_mount),
                "Kubernetes login", reference, address)
        document = _vault_call(lambda: client.secrets.kv.v2.read_secret_version(
            path=reference.path, mount_point=reference.mount, raise_on_deleted_version=True),
            "KV v2 read", reference, address)
    finally:
        session.close()
    return _fields(reference, address, document, required, optional)


@dataclass(frozen=True, slots=True)
class _Login:
    token: Secret | None
    k8s_role: str | None = None
    k8s_jwt: Secret | None = None
    k8s_mount: str = DEFAULT_K8S_MOUNT


def vault_address(ref: str, env: Mapping[str, str]) -> str:
    """``VAULT_ADDR`` checked: https (http only on loopback), host, optional port, no path."""
    address = (env.get("VAULT_ADDR") or "").strip()
    if not address:
        raise _unavailable("VAULT_ADDR is not set: it names the Vault server of vault:// "
                           "references", ref=ref)
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in {"http", "https"} or not parts.hostname \
            or parts.username or parts.password or parts.path not in {"", "/"} or parts.query \
            or parts.fragment:
        raise _unavailable("VAULT_ADDR must be https://host[:port]", ref=ref)
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise _unavailable("VAULT_ADDR must use https (plain http only for a loopback dev "
                           "server): the Vault token would travel in clear", ref=ref,
                           address=address)
    netloc = parts.hostname if port is None else f"{parts.hostname}:{port}"
    if ":" in parts.hostname:
        netloc = f"[{parts.hostname}]" if port is None else f"[{parts.hostname}]:{port}"
    return f"{parts.scheme}://{netloc}"


def _loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _login_method(ref: str, address: str, env: Mapping[str, str]) -> _Login:
    configured = [name for name in ("VAULT_TOKEN", "VAULT_TOKEN_FILE", "VAULT_K8S_ROLE")
                  if env.get(name)]
    if not configured:
        raise _unavailable("no Vault login configured: set VAULT_TOKEN, VAULT_TOKEN_FILE or "
                           "VAULT_K8S_ROLE", ref=ref, address=address)
    if len(configured) > 1:
        raise _unavailable(f"more than one Vault login configured ({', '.join(configured)}): "
                           "set exactly one", ref=ref, address=address)
    [method] = configured
    if method == "VAULT_TOKEN":
        return _Login(token=Secret(_header_safe(ref, address, "VAULT_TOKEN", env[method])))
    if method == "VAULT_TOKEN_FILE":
        text = _read_token_file(ref, address, "VAULT_TOKEN_FILE", Path(env[method]))
        return _Login(token=Secret(text))
    jwt_file = env.get("VAULT_K8S_TOKEN_FILE") or DEFAULT_K8S_TOKEN_FILE
    jwt = _read_token_file(ref, address, "the Kubernetes service-account token", Path(jwt_file))
    mount = env.get("VAULT_K8S_MOUNT") or DEFAULT_K8S_MOUNT
    if re.fullmatch(_SEGMENT, mount) is None:
        raise _unavailable("VAULT_K8S_MOUNT must be one path segment", ref=ref, address=address)
    return _Login(token=None, k8s_role=env[method], k8s_jwt=Secret(jwt), k8s_mount=mount)


def _read_token_file(ref: str, address: str, what: str, path: Path) -> str:
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_TOKEN_FILE_BYTES + 1)
    except OSError as exc:
        raise _unavailable(f"{what} ({path}) cannot be read ({exc.strerror or 'error'})",
                           ref=ref, address=address) from None
    try:
        text = raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
    except UnicodeDecodeError:
        raise _unavailable(f"{what} ({path}) is not UTF-8", ref=ref, address=address) from None
    if len(raw) > MAX_TOKEN_FILE_BYTES or not text:
        raise _unavailable(f"{what} ({path}) is empty or too large", ref=ref, address=address)
    return _header_safe(ref, address, what, text)


def _header_safe(ref: str, address: str, what: str, value: str) -> str:
    if not value.isascii() or not value.isprintable() or value != value.strip():
        raise _unavailable(f"{what} must be printable ASCII without surrounding space",
                           ref=ref, address=address)
    return value


def _vault_call(call: Callable[[], Any], step: str, reference: VaultReference,
                address: str) -> Any:
    """``call()``, with hvac's and requests' errors translated; their text (which may echo a
    response body) never enters the message."""
    import hvac.exceptions  # noqa: PLC0415
    import requests  # noqa: PLC0415

    try:
        answer = call()
    except hvac.exceptions.VaultError as exc:
        status = getattr(exc, "status_code", None) or _STATUS.get(type(exc).__name__)
        said = f"answered {status}" if status else f"refused it ({type(exc).__name__})"
        raise _unavailable(f"Vault {step} failed: Vault {said}", ref=reference.ref,
                           address=address, status=status) from None
    except requests.RequestException as exc:
        raise _unavailable(f"Vault {step} failed: {_transport_reason(exc)}", ref=reference.ref,
                           address=address) from None
    except (ValueError, KeyError, TypeError):
        raise _unavailable(f"Vault {step} failed: the answer is not the JSON Vault gives",
                           ref=reference.ref, address=address) from None
    if isinstance(answer, requests.Response):  # hvac hands back any answer other than a 200
        status = answer.status_code
        answer.close()
        said = " (redirects are never followed)" if 300 <= status < 400 else ""
        raise _unavailable(f"Vault {step} failed: Vault answered {status}{said}",
                           ref=reference.ref, address=address, status=status)
    return answer


_STATUS: Final = {"InvalidRequest": 400, "Unauthorized": 401, "Forbidden": 403,
                  "InvalidPath": 404, "RateLimitExceeded": 429, "InternalServerError": 500,
                  "VaultNotInitialized": 501, "BadGateway": 502, "VaultDown": 503}


def _transport_reason(exc: Exception) -> str:
    import requests  # noqa: PLC0415

    if isinstance(exc, requests.exceptions.SSLError):
        return "TLS verification failed"
    if isinstance(exc, requests.exceptions.Timeout):
        return f"no answer within {REQUEST_TIMEOUT_S:g} s"
    if isinstance(exc, requests.exceptions.ConnectionError):
        return "server unreachable"
    return type(exc).__name__


def _fields(reference: VaultReference, address: str, document: Any, required: Sequence[str],
            optional: Sequence[str]) -> dict[str, Secret]:
    data = document.get("data") if isinstance(document, dict) else None
    values = data.get("data") if isinstance(data, dict) else None
    if not isinstance(values, dict):
        raise _unavailable("Vault answered without KV v2 secret data (is MOUNT a KV version 2 "
                           "engine?)", ref=reference.ref, address=address)
    wanted = (reference.field,) if reference.field is not None else tuple(required)
    fields: dict[str, Secret] = {}
    for name in wanted:
        value = values.get(name)
        if not isinstance(value, str) or not value:
            hint = "" if reference.field is not None else \
                f" (the credential needs {', '.join(wanted)}, or name one field with #FIELD)"
            raise _unavailable(f"the Vault secret has no non-empty string field {name!r}{hint}",
                               ref=reference.ref, address=address)
        fields[name] = Secret(value)
    if reference.field is None:
        for name in optional:
            value = values.get(name)
            if isinstance(value, str) and value:
                fields[name] = Secret(value)
    return fields


def _unavailable(message: str, *, ref: str, address: str | None = None,
                 status: int | None = None) -> DponeError:
    details: dict[str, str | int] = {"credential_ref": ref}
    if address is not None:
        details["vault_addr"] = address
    message = f"{message} ({ref}" + (f" at Vault {address})" if address is not None else ")")
    if status is not None:
        details["vault_status"] = status
    return DponeError(code="credential.unavailable", message=message, details=details)
