"""Shared builders of the transport suites: bindings, credentials and requests."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dpone.contracts.binding import ConnectionBinding
from dpone.executor.transport import Credential, OutboundRequest, Secret

SENTINEL = "s3ntinel-VALUE-7f3a9c"
"""A secret value that must never appear in any repr, str, error text or log record."""


def binding(authority: str = "https://receiver.example.test", provider: str = "bearer",
            credential_ref: str | None = "env:RECEIVER_TOKEN", **auth_options: Any,
            ) -> ConnectionBinding:
    return ConnectionBinding.model_validate({
        "schema": "dpone.connection_binding.v1",
        "id": "receiver_binding",
        "connection_type": "rest",
        "environment_ref": "local-dev",
        "authority": authority,
        "auth_provider": provider,
        "credential_ref": credential_ref,
        "auth_options": auth_options,
        "remote_principal_id": "principal-1",
        "remote_account_id": "account-1",
        "remote_resource_namespace": "ingest",
        "remote_identity": {"mode": "platform_attested", "evidence_ref": "evidence://x",
                            "verified_at": dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
                            "valid_until": dt.datetime(2027, 11, 1, tzinfo=dt.UTC)},
        "tls_policy_ref": "loopback-plaintext@1",
        "network_policy_ref": "loopback-only@1",
    })


def credential(provider: str = "bearer", **fields: str) -> Credential:
    if not fields and provider in {"bearer", "api_key_header"}:
        fields = {"token": SENTINEL}
    return Credential(provider, {name: Secret(value) for name, value in fields.items()})


def post(path: str = "/v1/jobs", body: bytes = b'{"rows":1}', **kwargs: Any) -> OutboundRequest:
    return OutboundRequest(method="POST", path=path, content_type="application/json",
                           body=[body], content_length=len(body), **kwargs)
