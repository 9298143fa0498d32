"""Binding rules: a fixed, secure authority; plain HTTP only to loopback in development."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import TypeVar
from urllib.parse import urlsplit

from dpone.compiler._yaml import LoadedDocument
from dpone.contracts import DponeError, Location
from dpone.contracts.binding import (
    ConnectionBinding,
    Environment,
    EnvironmentDocument,
    NetworkPolicy,
    TlsPolicy,
    address_allowed,
)

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


def binding_policies(binding: ConnectionBinding, environment: EnvironmentDocument,
                     bdoc: LoadedDocument, edoc: LoadedDocument,
                     ) -> tuple[TlsPolicy, NetworkPolicy]:
    """The TLS and network policies the binding names, as its environment defines them.

    Refused at compile time: a ref the environment does not define (``binding.unknown_policy``),
    a production environment whose policy lets a binding use plain http
    (``environment.insecure_policy``), an http authority under a policy that requires https
    (``binding.insecure_authority``), and an IP-literal authority the network policy does not
    allow (``binding.authority_forbidden``).
    """
    tls = _defined(environment.tls_policies, binding.tls_policy_ref, "tls_policy_ref",
                   "tls_policies", environment.id, bdoc)
    network = _defined(environment.network_policies, binding.network_policy_ref,
                       "network_policy_ref", "network_policies", environment.id, bdoc)
    if environment.tier == "production" and not tls.require_https:
        raise DponeError(
            code="environment.insecure_policy",
            message=f"TLS policy {binding.tls_policy_ref!r} of production environment "
                    f"{environment.id!r} allows plain http",
            location=edoc.locate(("tls_policies", binding.tls_policy_ref, "require_https")),
            hint="A production environment sends only over verified https: set "
                 "require_https: true (the default).")
    parts = urlsplit(binding.authority)
    if tls.require_https and parts.scheme.lower() != "https":
        raise DponeError(
            code="binding.insecure_authority",
            message=f"TLS policy {binding.tls_policy_ref!r} requires https, the authority is "
                    f"{parts.scheme.lower()}://",
            location=bdoc.locate(("authority",)), hint=f"Use https://{parts.netloc}.")
    host = (parts.hostname or "").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return tls, network  # a name: its answers are checked when it is resolved
    if not address_allowed(address, network):
        raise DponeError(
            code="binding.authority_forbidden",
            message=f"authority address {host} is outside network policy "
                    f"{binding.network_policy_ref!r} (allow {list(network.allow)}, deny "
                    f"{list(network.deny)})",
            location=bdoc.locate(("authority",)),
            hint="Point the binding at an address the network policy allows, or name a "
                 "network policy that allows it.")
    return tls, network


_Policy = TypeVar("_Policy", TlsPolicy, NetworkPolicy)


def _defined(policies: Mapping[str, _Policy], ref: str, field: str, block: str,
             environment_id: str, bdoc: LoadedDocument) -> _Policy:
    policy = policies.get(ref)
    if policy is not None:
        return policy
    known = ", ".join(sorted(policies)) or "none"
    raise DponeError(
        code="binding.unknown_policy",
        message=f"{field} {ref!r} is not defined by environment {environment_id!r} "
                f"({block}: {known})",
        location=bdoc.locate((field,)),
        hint=f"Name one of the environment's {block}, or have the platform define {ref!r} "
             f"under {block} in environments/{environment_id}.yaml.")
