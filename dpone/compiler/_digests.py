"""The static identities of a compiled plan, computed from the resolved models."""

from __future__ import annotations

from typing import Any

from dpone.compiler._binding_rules import authority_origin
from dpone.contracts.binding import ConnectionBinding, Environment
from dpone.contracts.identity import (
    effect_conflict_domain,
    execution_policy_digest,
    operation_namespace,
    operation_semantics_digest,
    profile_contract_digest,
    receiver_binding_semantics_digest,
)
from dpone.contracts.profile import PROFILE_SCHEMA_ID, OperationProfile


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True)


def profile_digests(profile: OperationProfile, templates: dict[str, Any]) -> tuple[str, str, str]:
    """(operation_semantics_digest, execution_policy_digest, profile_contract_digest)."""
    request = profile.request
    fence = profile.mutation_fence
    semantics = operation_semantics_digest(
        method_semantics=request.method,
        path_query_header_semantics={
            "path": templates["path"],
            "query": templates["query"],
            "headers": templates["headers"],
        },
        canonical_body_envelope_semantics={
            "protocol_family": profile.protocol_family,
            "media_type": request.media_type,
            "body": _dump(request.body),
            "scalar_parts": templates["scalar_parts"],
            "codec": _dump(profile.codec),
            "limits": _dump(profile.limits),
            "max_in_flight_children": profile.max_in_flight_children,
            "supported_mutations": list(profile.supported_mutations),
            "effect_conflict_group": profile.effect_conflict_group,
        },
        acknowledgement_contract=_acknowledgement(profile, templates),
        mutation_fence_contract={
            "type": fence.type,
            "location": fence.location,
            "value_from": fence.value_from,
            "header_name": fence.header_name,
            "key_payload_binding": fence.key_payload_binding,
        },
        verification_contract={
            "verification": _dump(profile.verification),
            "result_policy": _dump(profile.result_policy),
        },
    )
    policy = execution_policy_digest(
        timeout_policy=_dump(profile.timeouts),
        retry_policy=_dump(profile.retry),
        distributed_rate_policy=_dump(profile.rate),
        retention_policy=_dump(profile.retention),
        observability_policy=_dump(profile.observability),
    )
    contract = profile_contract_digest(
        operation_semantics_digest=semantics,
        execution_policy_digest=policy,
        profile_schema_id=PROFILE_SCHEMA_ID,
        profile_version=profile.version,
    )
    return semantics, policy, contract


def _acknowledgement(profile: OperationProfile, templates: dict[str, Any]) -> dict[str, Any]:
    """The acknowledgement contract; a profile without a query by key keeps the identity it had
    before that block existed."""
    contract: dict[str, Any] = {**_dump(profile.acknowledgement),
                                "poll_path": templates.get("poll_path")}
    if profile.acknowledgement.query_by_key is None:
        del contract["query_by_key"]
    else:
        contract["query_by_key_path"] = templates["query_by_key_path"]
    return contract


def binding_digest(binding: ConnectionBinding) -> str:
    options = binding.auth_options
    return receiver_binding_semantics_digest(
        authority_origin=authority_origin(binding),
        remote_principal_id=binding.remote_principal_id,
        remote_account_id=binding.remote_account_id,
        remote_resource_namespace=binding.remote_resource_namespace,
        authentication_semantics={
            "provider": binding.auth_provider,
            "header_name": options.header_name.lower() if options.header_name else None,
            "token_path": options.token_path,
            "scopes": sorted(options.scopes),
        },
        tls_policy_identity=binding.tls_policy_ref,
        network_policy_identity=binding.network_policy_ref,
    )


def namespace_digest(environment: Environment) -> str:
    return operation_namespace(
        platform_instance_id=environment.platform_instance_id,
        tenant_id=environment.tenant_id,
        environment_id=environment.environment_id,
        namespace_revision=environment.namespace_revision,
    )


def conflict_domain(binding: ConnectionBinding, resource: str, group: str) -> str:
    return effect_conflict_domain(
        remote_principal_id=binding.remote_principal_id,
        remote_account_id=binding.remote_account_id,
        remote_resource_namespace=binding.remote_resource_namespace,
        receiver_resource_id=resource,
        effect_conflict_group=group,
    )
