"""Public surface of the identity algebra H (see ``_identity`` for the encoding)."""

from dpone.contracts._identity import (
    ENCODING_VERSION,
    Canonical,
    DigestValue,
    delivery_key,
    effect_conflict_domain,
    encode,
    execution_policy_digest,
    identity,
    mutation_intent_digest,
    operation_namespace,
    operation_semantics_digest,
    parent_plan_digest,
    profile_contract_digest,
    receiver_binding_semantics_digest,
    receiver_mutation_key,
    rendered_request_semantics_digest,
)

__all__ = [
    "ENCODING_VERSION",
    "Canonical",
    "DigestValue",
    "delivery_key",
    "effect_conflict_domain",
    "encode",
    "execution_policy_digest",
    "identity",
    "mutation_intent_digest",
    "operation_namespace",
    "operation_semantics_digest",
    "parent_plan_digest",
    "profile_contract_digest",
    "receiver_binding_semantics_digest",
    "receiver_mutation_key",
    "rendered_request_semantics_digest",
]
