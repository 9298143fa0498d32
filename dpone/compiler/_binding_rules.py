"""Binding rules: a fixed, secure authority; plain HTTP only to loopback in development."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from dpone.compiler._yaml import LoadedDocument
from dpone.contracts import DponeError, Location
from dpone.contracts.binding import ConnectionBinding, Environment

_LOOPBACK_NAMES = {"localhost"}


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def authority_origin(binding: ConnectionBinding) -> str:
    """The canonical origin: lower-case scheme and host, default port made explicit."""
    parts = urlsplit(binding.authority)
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if parts.scheme == "https" else 80)
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{shown}:{port}"


def check_binding(binding: ConnectionBinding, environment: Environment,
                  doc: LoadedDocument) -> None:
    where = doc.locate(("authority",))
    try:
        parts = urlsplit(binding.authority)
        port = parts.port
    except ValueError as exc:
        raise DponeError(code="binding.invalid_authority", message=f"authority is not a URL "
                         f"origin: {exc}", location=where) from None
    del port
    if (
        parts.scheme.lower() not in ("https", "http") or not parts.hostname
        or parts.path not in ("", "/") or parts.query or parts.fragment
        or parts.username is not None or parts.password is not None
    ):
        raise DponeError(code="binding.invalid_authority",
                         message=f"authority {binding.authority!r} must be scheme://host[:port] "
                         "only", location=where)
    loopback_dev = environment.tier == "development" and _is_loopback(parts.hostname.lower())
    if parts.scheme.lower() == "http" and not loopback_dev:
        raise _insecure(parts.hostname, parts.netloc, environment.id, environment.tier, where)
    if binding.auth_provider != "none" and binding.credential_ref is None:
        raise DponeError(code="schema.missing_field",
                         message=f"auth_provider {binding.auth_provider!r} needs credential_ref",
                         location=doc.locate(("auth_provider",)))
    if binding.auth_provider == "api_key_header" and binding.auth_options.header_name is None:
        raise DponeError(code="schema.missing_field", message="api_key_header needs "
                         "auth_options.header_name", location=doc.locate(("auth_options",)))
    if binding.remote_identity.valid_until <= binding.remote_identity.verified_at:
        raise DponeError(code="schema.invalid_value", message="remote_identity.valid_until must "
                         "be after verified_at", location=doc.locate(("remote_identity",)))


def _insecure(host: str, netloc: str, environment_id: str, tier: str,
              where: Location) -> DponeError:
    """Plain http refused: in development the host is what is wrong, elsewhere the scheme."""
    if tier == "development":
        return DponeError(
            code="binding.insecure_authority",
            message=f"plain http to {host!r} is refused: {host!r} is not a loopback address "
            f"(environment {environment_id!r} is development, which allows plain http only to "
            "127.0.0.1, ::1 or localhost)",
            location=where,
            hint="Plain http is allowed only to a loopback receiver in development: use "
                 f"https://{netloc} for this receiver.")
    return DponeError(
        code="binding.insecure_authority",
        message="plain http is allowed only to a loopback receiver in a development "
        f"environment (environment {environment_id!r} is {tier})",
        location=where,
        hint=f"Use https://; a {tier} environment never sends over plain http.")
