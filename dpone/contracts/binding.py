"""Platform-owned connection bindings and environments: authority and credential *references*."""

from __future__ import annotations

import datetime as dt
import ipaddress
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, model_validator

from dpone.contracts._base import Name, StrictModel
from dpone.contracts.certification import (
    CertificationPolicy,
    CertificationScope,
    Runtime,
)

BINDING_SCHEMA_ID = "dpone.connection_binding.v1"
ENVIRONMENT_SCHEMA_ID = "dpone.environment.v1"

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,127}$")]
CredentialRef = Annotated[str, Field(pattern=r"^(env:[A-Z][A-Z0-9_]{0,127}|file:/[^\s]{1,1023}|vault://[^\s]{1,1016}|conn:[A-Za-z0-9_]{1,128})$")]
HeaderName = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9-]{0,63}$")]


LocatorText = Annotated[str, Field(min_length=1, max_length=2048, pattern=r"^\S+$")]


class ControlPlane(StrictModel):
    """Where an environment's deliveries are recorded: what ``--environment NAME`` resolves.

    ``journal`` is a SQLite file or a ``postgresql://`` URL without a password (libpq's
    environment or ``~/.pgpass`` supplies it); ``artifacts`` is the artifact store (a directory,
    ``file://`` or ``s3://`` URL) that also holds the published plans; ``plans`` an optional
    local plan store searched first. Relative paths resolve against the current directory, like
    the CLI's own defaults. Never part of a plan: moving a journal changes no plan digest.
    """

    journal: LocatorText
    artifacts: LocatorText
    plans: LocatorText | None = None


class Environment(StrictModel):
    """One control-plane environment as a plan compiles it in: the inputs of
    operation_namespace and its tier."""

    schema_id: Literal["dpone.environment.v1"] = Field(alias="schema")
    id: Name
    tier: Literal["development", "production"]
    platform_instance_id: Identifier
    tenant_id: Identifier
    environment_id: Identifier
    namespace_revision: Annotated[int, Field(ge=1)]


class LeasePolicy(StrictModel):
    """How long a run's journal leases last, and how often the live run renews them.

    A run holds every lease it takes (mutation, observation, checkpoint, operator) for
    ``ttl_s`` and renews it every ``heartbeat_s`` while the process lives, so a lost process
    blocks its children for at most ``ttl_s`` (the time until recovery can start), never for
    the whole submit budget. Expiry after SUBMITTING never authorizes a resend: a takeover
    observes or reconciles only.
    """

    ttl_s: Annotated[int, Field(ge=2, le=3600)] = 60
    heartbeat_s: Annotated[int, Field(ge=1, le=1200)] | None = None
    """Defaults to a third of ``ttl_s``; under half of it, so one failed renewal still leaves
    time for the next."""

    @model_validator(mode="after")
    def _heartbeat_within_ttl(self) -> LeasePolicy:
        if self.heartbeat_s is not None and self.heartbeat_s * 2 >= self.ttl_s:
            raise ValueError(f"heartbeat_s {self.heartbeat_s} must be under half of ttl_s "
                             f"{self.ttl_s}")
        return self

    @property
    def heartbeat_interval_s(self) -> float:
        """Seconds between renewals."""
        return float(self.heartbeat_s) if self.heartbeat_s is not None else self.ttl_s / 3


def _cidr(value: str) -> str:
    """A CIDR in canonical form (``10.0.0.0/8``); host bits set are refused."""
    try:
        return str(ipaddress.ip_network(value, strict=True))
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a CIDR network ({exc})") from None


def _proxy_url(value: str) -> str:
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"proxy {value!r} is not a URL: {exc}") from None
    if (parts.scheme not in ("http", "https") or not parts.hostname or port is None
            or parts.username is not None or parts.password is not None
            or parts.path not in ("", "/") or parts.query or parts.fragment):
        raise ValueError("a proxy is http(s)://host:port only, without userinfo, path, query "
                         "or fragment (proxy credentials are never written in a policy)")
    return value


Cidr = Annotated[str, AfterValidator(_cidr)]
ProxyUrl = Annotated[str, Field(max_length=512), AfterValidator(_proxy_url)]
CaBundleRef = Annotated[str, Field(pattern=r"^file:/[^\s]{1,1023}$")]


class TlsPolicy(StrictModel):
    """A platform-owned TLS policy, named by a binding's ``tls_policy_ref``.

    ``require_https`` refuses a plain-http authority (a production environment accepts only
    policies that require it); ``min_version`` is the lowest TLS version offered (never below
    1.2); ``ca_bundle_ref`` (``file:/path`` on the executing machine) replaces the public roots
    (certifi) as the only trusted CAs. Certificates and host names are always verified.
    """

    require_https: bool = True
    min_version: Literal["1.2", "1.3"] = "1.2"
    ca_bundle_ref: CaBundleRef | None = None


class NetworkPolicy(StrictModel):
    """A platform-owned egress policy, named by a binding's ``network_policy_ref``.

    Every address the receiver's name resolves to must lie in an ``allow`` network and in no
    ``deny`` network (deny wins); unspecified, multicast and reserved addresses are never
    allowed. ``proxy`` is the only proxy a transport uses (environment variables such as
    HTTPS_PROXY are ignored); with a proxy, the proxy resolves the receiver's name and its own
    address is the one checked here.
    """

    allow: Annotated[tuple[Cidr, ...], Field(min_length=1)]
    deny: tuple[Cidr, ...] = ()
    proxy: ProxyUrl | None = None


IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def address_allowed(address: IpAddress, policy: NetworkPolicy) -> bool:
    """True when ``policy`` lets a connection go to ``address``.

    An IPv4-mapped IPv6 address is judged as the IPv4 address it carries; unspecified,
    multicast and reserved IPv4 addresses (broadcast included) are never allowed; a ``deny``
    network wins over an ``allow`` network.
    """
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_unspecified or address.is_multicast or (
            isinstance(address, ipaddress.IPv4Address) and address.is_reserved):
        return False
    if any(address in ipaddress.ip_network(net) for net in policy.deny):
        return False
    return any(address in ipaddress.ip_network(net) for net in policy.allow)


class EnvironmentDocument(Environment):
    """The environment file: the compiled identity (:class:`Environment`, the plan's snapshot)
    plus the control plane that is never part of a plan: where its journal and artifacts live
    (``control_plane``) and how long a run's leases last (``leases``)."""

    control_plane: ControlPlane | None = None
    leases: LeasePolicy = LeasePolicy()
    runtime: Runtime = Runtime()
    """Runtime switches read when a run starts (``runtime.features.rest_bulk_delivery_v1``: the
    kill switch of new deliveries, off unless the file turns it on)."""
    certification: CertificationPolicy | None = None
    """What the profiles of this environment's plans must have proven (None: nothing)."""
    tls_policies: dict[Identifier, TlsPolicy] = {}
    """The TLS policies bindings of this environment may name (``tls_policy_ref``)."""
    network_policies: dict[Identifier, NetworkPolicy] = {}
    """The egress policies bindings of this environment may name (``network_policy_ref``)."""

    def identity(self) -> Environment:
        """The part a plan compiles in (moving a journal or tuning leases changes no plan; the
        policy a binding names is compiled into the plan with the binding)."""
        return Environment.model_validate(
            self.model_dump(mode="json", by_alias=True,
                            exclude={"control_plane", "leases", "tls_policies",
                                     "network_policies", "runtime", "certification"}))


class RemoteIdentity(StrictModel):
    mode: Literal["receiver_attested", "platform_attested"]
    evidence_ref: Annotated[str, Field(min_length=1, max_length=512)]
    verified_at: dt.datetime
    valid_until: dt.datetime


class AuthOptions(StrictModel):
    header_name: HeaderName | None = None
    token_path: Annotated[str, Field(pattern=r"^/[A-Za-z0-9/_.-]{0,255}$")] | None = None
    scopes: tuple[Annotated[str, Field(pattern=r"^[A-Za-z0-9:._/-]{1,128}$")], ...] = ()


class ConnectionBinding(StrictModel):
    schema_id: Literal["dpone.connection_binding.v1"] = Field(alias="schema")
    id: Name
    connection_type: Literal["rest"]
    environment_ref: Name
    authority: Annotated[str, Field(min_length=1, max_length=512)]
    auth_provider: Literal[
        "bearer", "api_key_header", "basic", "oauth2_client_credentials", "mtls", "none"
    ]
    credential_ref: CredentialRef | None = None
    auth_options: AuthOptions = AuthOptions()
    remote_principal_id: Identifier
    remote_account_id: Identifier
    remote_resource_namespace: Identifier
    remote_identity: RemoteIdentity
    tls_policy_ref: Identifier
    network_policy_ref: Identifier
    certification_scope: CertificationScope | None = None
    """The sandbox `dpone profile certify` may write to through this binding (None: it may
    not certify through it)."""
