"""The identity algebra H.

H is SHA-256 over a versioned, typed, length-delimited encoding with one domain tag per
identity. Every value carries a one-byte type tag and an 8-byte big-endian length, so no two
distinct inputs share an encoding: there is no concatenation ambiguity (lengths delimit),
no type confusion (tags differ: ``1`` vs ``"1"`` vs ``True``), and no key-order dependence
(mappings are encoded in sorted key order). Display strings are never hash inputs: a digest
passed in as an input is encoded as its raw 32 bytes under its own tag.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
import struct
from collections.abc import Mapping, Sequence
from typing import Union

ENCODING_VERSION = b"dpone.H.v1"
_RENDERED_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")

Canonical = Union[
    None,
    bool,
    int,
    float,
    str,
    bytes,
    "DigestValue",
    dt.date,
    dt.datetime,
    Sequence["Canonical"],
    Mapping[str, "Canonical"],
]


class DigestValue:
    """A digest used as a hash input: encoded as 32 raw bytes, never as its display string."""

    __slots__ = ("raw",)

    def __init__(self, rendered: str) -> None:
        if not _RENDERED_DIGEST.match(rendered):
            raise ValueError(f"not a rendered sha256 digest: {rendered!r}")
        self.raw = bytes.fromhex(rendered[7:])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DigestValue) and other.raw == self.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return f"DigestValue('sha256:{self.raw.hex()}')"


def _frame(tag: bytes, payload: bytes) -> bytes:
    return tag + struct.pack(">Q", len(payload)) + payload


def encode(value: Canonical) -> bytes:
    """The typed, length-delimited encoding of one canonical value."""
    if value is None:
        return _frame(b"N", b"")
    if isinstance(value, bool):
        return _frame(b"B", b"\x01" if value else b"\x00")
    if isinstance(value, int):
        # Sign and hex digits: unlike str(), free of the interpreter's int-to-decimal limit.
        rendered = ("-" if value < 0 else "") + format(abs(value), "x")
        return _frame(b"I", rendered.encode("ascii"))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite floats have no canonical identity")
        return _frame(b"F", value.hex().encode("ascii"))
    if isinstance(value, str):
        return _frame(b"S", value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes | bytearray | memoryview):
        return _frame(b"Y", bytes(value))
    if isinstance(value, DigestValue):
        return _frame(b"D", value.raw)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None or value.utcoffset() != dt.timedelta(0):
            raise ValueError("timestamps in identities must be UTC-aware")
        naive = value.replace(tzinfo=None).isoformat(timespec="microseconds")
        return _frame(b"Z", (naive + "Z").encode("ascii"))
    if isinstance(value, dt.date):
        return _frame(b"T", value.isoformat().encode("ascii"))
    if isinstance(value, Mapping):
        items = []
        for key in sorted(value):
            if not isinstance(key, str):
                raise TypeError("mapping keys in identities must be strings")
            items.append(encode(key) + encode(value[key]))
        return _frame(b"M", struct.pack(">Q", len(items)) + b"".join(items))
    if isinstance(value, Sequence):
        parts = [encode(item) for item in value]
        return _frame(b"L", struct.pack(">Q", len(parts)) + b"".join(parts))
    raise TypeError(f"{type(value).__name__} has no canonical identity encoding")


def identity(domain: str, fields: Mapping[str, Canonical]) -> str:
    """H(domain, fields): the rendered ``sha256:<hex>`` of a domain-tagged record."""
    body = encode(ENCODING_VERSION) + encode(domain) + encode(fields)
    return "sha256:" + hashlib.sha256(body).hexdigest()


def _d(rendered: str) -> DigestValue:
    return DigestValue(rendered)


def operation_namespace(
    *, platform_instance_id: str, tenant_id: str, environment_id: str, namespace_revision: int
) -> str:
    return identity(
        "operation_namespace",
        {
            "platform_instance_id": platform_instance_id,
            "tenant_id": tenant_id,
            "environment_id": environment_id,
            "namespace_revision": namespace_revision,
        },
    )


def delivery_key(
    *,
    logical_route_id: str,
    target_effect_scope: Mapping[str, Canonical],
    source_boundary: Mapping[str, Canonical],
    mutation_kind: str,
    explicit_generation: Sequence[Canonical],
) -> str:
    return identity(
        "delivery_key",
        {
            "logical_route_id": logical_route_id,
            "target_effect_scope": target_effect_scope,
            "source_boundary": source_boundary,
            "mutation_kind": mutation_kind,
            "explicit_generation": explicit_generation,
        },
    )


def receiver_mutation_key(*, operation_namespace: str, delivery_key: str) -> str:
    return identity(
        "receiver_mutation_key",
        {"operation_namespace": _d(operation_namespace), "delivery_key": _d(delivery_key)},
    )


def receiver_binding_semantics_digest(
    *,
    authority_origin: str,
    remote_principal_id: str,
    remote_account_id: str,
    remote_resource_namespace: str,
    authentication_semantics: Mapping[str, Canonical],
    tls_policy_identity: str,
    network_policy_identity: str,
) -> str:
    return identity(
        "receiver_binding_semantics",
        {
            "authority_origin": authority_origin,
            "remote_principal_id": remote_principal_id,
            "remote_account_id": remote_account_id,
            "remote_resource_namespace": remote_resource_namespace,
            "authentication_semantics": authentication_semantics,
            "tls_policy_identity": tls_policy_identity,
            "network_policy_identity": network_policy_identity,
        },
    )


def operation_semantics_digest(
    *,
    method_semantics: str,
    path_query_header_semantics: Mapping[str, Canonical],
    canonical_body_envelope_semantics: Mapping[str, Canonical],
    acknowledgement_contract: Mapping[str, Canonical],
    mutation_fence_contract: Mapping[str, Canonical],
    verification_contract: Mapping[str, Canonical],
) -> str:
    return identity(
        "operation_semantics",
        {
            "method_semantics": method_semantics,
            "path_query_header_semantics": path_query_header_semantics,
            "canonical_body_envelope_semantics": canonical_body_envelope_semantics,
            "acknowledgement_contract": acknowledgement_contract,
            "mutation_fence_contract": mutation_fence_contract,
            "verification_contract": verification_contract,
        },
    )


def rendered_request_semantics_digest(
    *,
    method: str,
    normalized_rendered_path_and_query: str,
    all_non_secret_semantic_headers: Mapping[str, Canonical],
    ordered_scalar_multipart_parts: Sequence[Canonical],
    payload_part_name: str | None,
    deterministic_filename: str | None,
    content_disposition_and_type: Mapping[str, Canonical],
    deterministic_multipart_boundary: str | None,
    sealed_payload_digest: str,
) -> str:
    return identity(
        "rendered_request_semantics",
        {
            "method": method,
            "normalized_rendered_path_and_query": normalized_rendered_path_and_query,
            "all_non_secret_semantic_headers": all_non_secret_semantic_headers,
            "ordered_scalar_multipart_parts": ordered_scalar_multipart_parts,
            "payload_part_name": payload_part_name,
            "deterministic_filename": deterministic_filename,
            "content_disposition_and_type": content_disposition_and_type,
            "deterministic_multipart_boundary": deterministic_multipart_boundary,
            "sealed_payload_digest": _d(sealed_payload_digest),
        },
    )


def mutation_intent_digest(
    *,
    receiver_binding_semantics_digest: str,
    operation_semantics_digest: str,
    rendered_request_semantics_digest: str,
) -> str:
    return identity(
        "mutation_intent",
        {
            "receiver_binding_semantics_digest": _d(receiver_binding_semantics_digest),
            "operation_semantics_digest": _d(operation_semantics_digest),
            "rendered_request_semantics_digest": _d(rendered_request_semantics_digest),
        },
    )


def execution_policy_digest(
    *,
    timeout_policy: Mapping[str, Canonical],
    retry_policy: Mapping[str, Canonical],
    distributed_rate_policy: Mapping[str, Canonical],
    retention_policy: Mapping[str, Canonical],
    observability_policy: Mapping[str, Canonical],
) -> str:
    return identity(
        "execution_policy",
        {
            "timeout_policy": timeout_policy,
            "retry_policy": retry_policy,
            "distributed_rate_policy": distributed_rate_policy,
            "retention_policy": retention_policy,
            "observability_policy": observability_policy,
        },
    )


def profile_contract_digest(
    *,
    operation_semantics_digest: str,
    execution_policy_digest: str,
    profile_schema_id: str,
    profile_version: int,
) -> str:
    return identity(
        "profile_contract",
        {
            "operation_semantics_digest": _d(operation_semantics_digest),
            "execution_policy_digest": _d(execution_policy_digest),
            "profile_schema_id": profile_schema_id,
            "profile_version": profile_version,
        },
    )


def effect_conflict_domain(
    *,
    remote_principal_id: str,
    remote_account_id: str,
    remote_resource_namespace: str,
    receiver_resource_id: str,
    effect_conflict_group: str,
) -> str:
    return identity(
        "effect_conflict_domain",
        {
            "remote_principal_id": remote_principal_id,
            "remote_account_id": remote_account_id,
            "remote_resource_namespace": remote_resource_namespace,
            "receiver_resource_id": receiver_resource_id,
            "effect_conflict_group": effect_conflict_group,
        },
    )


def parent_plan_digest(
    *,
    frozen_parent_digest: str,
    compiled_plan_digest: str,
    profile_contract_digest: str,
    planner_algorithm_version: str,
    ordered_child_descriptors: Sequence[Mapping[str, Canonical]],
    complete_coverage_proof: Mapping[str, Canonical],
) -> str:
    return identity(
        "parent_plan",
        {
            "frozen_parent_digest": _d(frozen_parent_digest),
            "compiled_plan_digest": _d(compiled_plan_digest),
            "profile_contract_digest": _d(profile_contract_digest),
            "planner_algorithm_version": planner_algorithm_version,
            "ordered_child_descriptors": ordered_child_descriptors,
            "complete_coverage_proof": complete_coverage_proof,
        },
    )
