"""Platform-owned connection bindings and environments: authority and credential *references*."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, model_validator

from dpone.contracts._base import Name, StrictModel

BINDING_SCHEMA_ID = "dpone.connection_binding.v1"
ENVIRONMENT_SCHEMA_ID = "dpone.environment.v1"

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,127}$")]
CredentialRef = Annotated[str, Field(pattern=r"^(env:[A-Z][A-Z0-9_]{0,127}|file:/[^\s]{1,1023}|vault://[^\s]{1,1016}|conn:[A-Za-z0-9_]{1,128})$")]
HeaderName = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9-]{0,63}$")]


class Environment(StrictModel):
    """One control-plane environment: the inputs of operation_namespace and its tier."""

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


class EnvironmentDocument(Environment):
    """The environment file: the compiled identity (:class:`Environment`, the plan's snapshot)
    plus runtime control-plane policy that is not part of any plan, such as its leases."""

    leases: LeasePolicy = LeasePolicy()

    def identity(self) -> Environment:
        """The part a plan compiles in (changing lease policy changes no plan digest)."""
        return Environment.model_validate(
            self.model_dump(mode="json", by_alias=True, exclude={"leases"}))


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
