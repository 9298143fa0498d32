"""Platform-owned connection bindings and environments: authority and credential *references*."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field

from dpone.contracts._base import Name, StrictModel

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
    """One control-plane environment: the inputs of operation_namespace and its tier, and
    (``control_plane``, left out of every plan) where its journal and artifacts live."""

    schema_id: Literal["dpone.environment.v1"] = Field(alias="schema")
    id: Name
    tier: Literal["development", "production"]
    platform_instance_id: Identifier
    tenant_id: Identifier
    environment_id: Identifier
    namespace_revision: Annotated[int, Field(ge=1)]
    control_plane: ControlPlane | None = Field(default=None, exclude=True)


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
