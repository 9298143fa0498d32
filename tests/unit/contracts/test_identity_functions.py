"""The named identities of "Canonical identity and conflict policy" and "Replacement generation
and overlap fence": shape, determinism, input sensitivity, domain separation, the spec's rules,
cross-process stability and golden digests.
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from dpone.contracts import _identity
from dpone.contracts import identity as H

UTC = dt.UTC
DIGEST_RE = re.compile(r"^sha256:[0-9a-f]{64}$")


def _digest(n: int) -> str:
    return "sha256:" + f"{n:02x}" * 32


# One baseline call per identity; every field has a distinct, realistic value.
BASELINES: dict[str, dict[str, Any]] = {
    "operation_namespace": {
        "platform_instance_id": "dpone-prod-eu1",
        "tenant_id": "acme",
        "environment_id": "production",
        "namespace_revision": 3,
    },
    "delivery_key": {
        "logical_route_id": "measurements-to-mock",
        "target_effect_scope": {"resource": "measurements", "from": dt.date(2026, 8, 1),
                                "to": dt.date(2026, 8, 2), "inclusive_to": False},
        "source_boundary": {"extraction_occurrence": "2026-08-01/run-1",
                            "interval": ["2026-08-01", "2026-08-02"]},
        "mutation_kind": "partition_replace",
        "explicit_generation": (dt.datetime(2026, 8, 2, tzinfo=UTC), 0),
    },
    "receiver_mutation_key": {
        "operation_namespace": _digest(0x11),
        "delivery_key": _digest(0x22),
    },
    "receiver_binding_semantics_digest": {
        "authority_origin": "https://receiver.example:443",
        "remote_principal_id": "principal-42",
        "remote_account_id": "account-7",
        "remote_resource_namespace": "mock",
        "authentication_semantics": {"scheme": "oauth2_client_credentials", "audience": "api"},
        "tls_policy_identity": "tls-policy-v2",
        "network_policy_identity": "egress-eu1",
    },
    "operation_semantics_digest": {
        "method_semantics": "POST",
        "path_query_header_semantics": {"path": "/v1/{resource}/bulk", "query": {}},
        "canonical_body_envelope_semantics": {"format": "jsonl", "compression": "gzip"},
        "acknowledgement_contract": {"kind": "sync_batch", "success": [200, 201]},
        "mutation_fence_contract": {"idempotency_header": "Idempotency-Key"},
        "verification_contract": {"count": "response:/accepted"},
    },
    "rendered_request_semantics_digest": {
        "method": "POST",
        "normalized_rendered_path_and_query": "/v1/measurements/bulk?mode=replace",
        "all_non_secret_semantic_headers": {"content-type": "multipart/form-data"},
        "ordered_scalar_multipart_parts": [{"name": "mode", "value": "replace"}],
        "payload_part_name": "file",
        "deterministic_filename": "part-0000.jsonl.gz",
        "content_disposition_and_type": {"disposition": "form-data", "type": "application/gzip"},
        "deterministic_multipart_boundary": "dpone-boundary-0001",
        "sealed_payload_digest": _digest(0x33),
    },
    "mutation_intent_digest": {
        "receiver_binding_semantics_digest": _digest(0x44),
        "operation_semantics_digest": _digest(0x55),
        "rendered_request_semantics_digest": _digest(0x66),
    },
    "execution_policy_digest": {
        "timeout_policy": {"connect_s": 5, "read_s": 60},
        "retry_policy": {"max_attempts": 3, "initial_delay_s": 1.0},
        "distributed_rate_policy": {"rps": 10},
        "retention_policy": {"receipt_days": 30},
        "observability_policy": {"metrics": True},
    },
    "profile_contract_digest": {
        "operation_semantics_digest": _digest(0x77),
        "execution_policy_digest": _digest(0x88),
        "profile_schema_id": "dpone.rest-profile.v1",
        "profile_version": 1,
    },
    "effect_conflict_domain": {
        "remote_principal_id": "principal-42",
        "remote_account_id": "account-7",
        "remote_resource_namespace": "mock",
        "receiver_resource_id": "measurements",
        "effect_conflict_group": "mock.measurements",
    },
    "parent_plan_digest": {
        "frozen_parent_digest": _digest(0x99),
        "compiled_plan_digest": _digest(0xAA),
        "profile_contract_digest": _digest(0xBB),
        "planner_algorithm_version": "adaptive-v1",
        "ordered_child_descriptors": [
            {"ordinal": 0, "payload_ref": _digest(0xCC), "rows": 1000},
            {"ordinal": 1, "payload_ref": _digest(0xDD), "rows": 10},
        ],
        "complete_coverage_proof": {"rows": 1010, "children": 2},
    },
}

# The spec's field list for each H(...) (hard-coded from the design text, in spec order).
SPEC_FIELDS: dict[str, list[str]] = {
    "operation_namespace": [
        "platform_instance_id", "tenant_id", "environment_id", "namespace_revision"],
    "delivery_key": [
        "logical_route_id", "target_effect_scope", "source_boundary", "mutation_kind",
        "explicit_generation"],
    "receiver_mutation_key": ["operation_namespace", "delivery_key"],
    "receiver_binding_semantics_digest": [
        "authority_origin", "remote_principal_id", "remote_account_id",
        "remote_resource_namespace", "authentication_semantics", "tls_policy_identity",
        "network_policy_identity"],
    "operation_semantics_digest": [
        "method_semantics", "path_query_header_semantics", "canonical_body_envelope_semantics",
        "acknowledgement_contract", "mutation_fence_contract", "verification_contract"],
    "rendered_request_semantics_digest": [
        "method", "normalized_rendered_path_and_query", "all_non_secret_semantic_headers",
        "ordered_scalar_multipart_parts", "payload_part_name", "deterministic_filename",
        "content_disposition_and_type", "deterministic_multipart_boundary",
        "sealed_payload_digest"],
    "mutation_intent_digest": [
        "receiver_binding_semantics_digest", "operation_semantics_digest",
        "rendered_request_semantics_digest"],
    "execution_policy_digest": [
        "timeout_policy", "retry_policy", "distributed_rate_policy", "retention_policy",
        "observability_policy"],
    "profile_contract_digest": [
        "operation_semantics_digest", "execution_policy_digest", "profile_schema_id",
        "profile_version"],
    "effect_conflict_domain": [
        "remote_principal_id", "remote_account_id", "remote_resource_namespace",
        "receiver_resource_id", "effect_conflict_group"],
    "parent_plan_digest": [
        "frozen_parent_digest", "compiled_plan_digest", "profile_contract_digest",
        "planner_algorithm_version", "ordered_child_descriptors", "complete_coverage_proof"],
}

FUNCTIONS: dict[str, Callable[..., str]] = {name: getattr(H, name) for name in BASELINES}
# Parameters that take a rendered digest (encoded as 32 raw bytes, never as display text).
DIGEST_PARAMS = {
    (name, param)
    for name, kwargs in BASELINES.items()
    for param, value in kwargs.items()
    if isinstance(value, str) and value.startswith("sha256:")
}


def call(name: str, **overrides: Any) -> str:
    return FUNCTIONS[name](**{**BASELINES[name], **overrides})


def perturb(value: Any) -> Any:
    """A different value of the same kind (a minimal, type-preserving change)."""
    if value is None:
        return "present"
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        if value.startswith("sha256:"):
            return "sha256:" + value[7:-1] + ("1" if value[-1] != "1" else "2")
        return value + "x"
    if isinstance(value, dict):
        return {**value, "extra": None}
    if isinstance(value, list | tuple):
        return [*value, None]
    raise AssertionError(value)


FIELD_CASES = [(name, param) for name, kwargs in BASELINES.items() for param in kwargs]


# --------------------------------------------------------------------------------------
# Shape, signature, determinism, sensitivity
# --------------------------------------------------------------------------------------


def test_baselines_cover_every_named_identity() -> None:
    assert set(FUNCTIONS) == set(SPEC_FIELDS)
    assert len(FUNCTIONS) == 11


@pytest.mark.parametrize("name", sorted(SPEC_FIELDS))
def test_signature_is_exactly_the_spec_field_list(name: str) -> None:
    params = inspect.signature(FUNCTIONS[name]).parameters
    assert list(params) == SPEC_FIELDS[name]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    assert all(p.default is inspect.Parameter.empty for p in params.values())


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_output_is_a_rendered_sha256_and_deterministic(name: str) -> None:
    first = call(name)
    assert DIGEST_RE.fullmatch(first)
    assert call(name) == first
    # rebuilding the inputs (tuple <-> list, reversed dict insertion) changes nothing
    rebuilt = {
        key: (dict(reversed(list(value.items()))) if isinstance(value, dict)
              else list(value) if isinstance(value, tuple) else value)
        for key, value in BASELINES[name].items()
    }
    assert FUNCTIONS[name](**dict(reversed(list(rebuilt.items())))) == first


@pytest.mark.parametrize(("name", "field"), FIELD_CASES, ids=[f"{n}.{f}" for n, f in FIELD_CASES])
def test_changing_any_single_field_changes_the_identity(name: str, field: str) -> None:
    baseline = call(name)
    changed = call(name, **{field: perturb(BASELINES[name][field])})
    assert DIGEST_RE.fullmatch(changed)
    assert changed != baseline


@pytest.mark.parametrize(("name", "field"), sorted(DIGEST_PARAMS))
def test_digest_inputs_must_be_rendered_digests(name: str, field: str) -> None:
    with pytest.raises(ValueError):
        call(name, **{field: "not-a-digest"})
    with pytest.raises(ValueError):
        call(name, **{field: BASELINES[name][field][7:]})  # bare hex, no algorithm prefix


def test_digest_inputs_are_hashed_as_raw_bytes_not_display_strings() -> None:
    ns, dk = _digest(0x11), _digest(0x22)
    key = H.receiver_mutation_key(operation_namespace=ns, delivery_key=dk)
    raw = H.identity(
        "receiver_mutation_key",
        {"operation_namespace": H.DigestValue(ns), "delivery_key": H.DigestValue(dk)},
    )
    display = H.identity("receiver_mutation_key", {"operation_namespace": ns, "delivery_key": dk})
    assert key == raw
    assert key != display


# --------------------------------------------------------------------------------------
# Domain separation between the named identities
# --------------------------------------------------------------------------------------


def _capture_domains(monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[str, dict[str, Any]]]:
    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    real = _identity.identity

    for name in BASELINES:
        def spy(domain: str, fields: Any, _name: str = name) -> str:
            seen[_name] = (domain, dict(fields))
            return real(domain, fields)

        monkeypatch.setattr(_identity, "identity", spy)
        call(name)
    monkeypatch.setattr(_identity, "identity", real)
    return seen


def test_every_identity_has_its_own_domain_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _capture_domains(monkeypatch)
    assert set(seen) == set(BASELINES)
    domains = [domain for domain, _ in seen.values()]
    assert len(set(domains)) == len(domains) == 11
    # each function hashes exactly its spec fields under its own tag
    for name, (domain, fields) in seen.items():
        assert set(fields) == set(SPEC_FIELDS[name])
        assert call(name) == _identity.identity(domain, fields)
    # the same field record under any other identity's tag gives a different digest
    for name, (domain, fields) in seen.items():
        for other_domain in set(domains) - {domain}:
            assert _identity.identity(other_domain, fields) != call(name)


def test_functions_given_the_same_data_do_not_collide() -> None:
    """Identities whose spec fields overlap or coincide in shape, fed identical values."""
    shared = {
        "remote_principal_id": "p",
        "remote_account_id": "a",
        "remote_resource_namespace": "n",
    }
    binding = H.receiver_binding_semantics_digest(
        authority_origin="x", authentication_semantics={}, tls_policy_identity="x",
        network_policy_identity="x", **shared)
    domain = H.effect_conflict_domain(receiver_resource_id="x", effect_conflict_group="x", **shared)
    assert binding != domain

    d1, d2, d3 = _digest(1), _digest(2), _digest(3)
    intent = H.mutation_intent_digest(
        receiver_binding_semantics_digest=d1, operation_semantics_digest=d2,
        rendered_request_semantics_digest=d3)
    profile = H.profile_contract_digest(
        operation_semantics_digest=d2, execution_policy_digest=d3, profile_schema_id=d1,
        profile_version=0)
    rmk = H.receiver_mutation_key(operation_namespace=d1, delivery_key=d2)
    ns = H.operation_namespace(platform_instance_id=d1, tenant_id=d2, environment_id=d3,
                               namespace_revision=0)
    empty = {}
    policy = H.execution_policy_digest(
        timeout_policy=empty, retry_policy=empty, distributed_rate_policy=empty,
        retention_policy=empty, observability_policy=empty)
    semantics = H.operation_semantics_digest(
        method_semantics="", path_query_header_semantics=empty,
        canonical_body_envelope_semantics=empty, acknowledgement_contract=empty,
        mutation_fence_contract=empty, verification_contract=empty)
    outputs = [binding, domain, intent, profile, rmk, ns, policy, semantics]
    assert len(set(outputs)) == len(outputs)


# --------------------------------------------------------------------------------------
# Spec rules
# --------------------------------------------------------------------------------------

NAMESPACE_FIELDS = ["platform_instance_id", "tenant_id", "environment_id", "namespace_revision"]


@pytest.mark.parametrize("field", NAMESPACE_FIELDS)
def test_receiver_mutation_key_differs_across_namespaces(field: str) -> None:
    """receiver_mutation_key = H(operation_namespace, delivery_key) prevents collisions between
    platform instances, tenants, environments and namespace revisions on one receiver account."""
    dk = call("delivery_key")
    ns_a = call("operation_namespace")
    ns_b = call("operation_namespace", **{field: perturb(BASELINES["operation_namespace"][field])})
    key_a = H.receiver_mutation_key(operation_namespace=ns_a, delivery_key=dk)
    key_b = H.receiver_mutation_key(operation_namespace=ns_b, delivery_key=dk)
    assert ns_a != ns_b
    assert key_a != key_b


def test_receiver_mutation_key_depends_on_the_delivery_key() -> None:
    ns = call("operation_namespace")
    next_generation = (dt.datetime(2026, 8, 2, tzinfo=UTC), 1)
    dk_a = call("delivery_key")
    dk_b = call("delivery_key", explicit_generation=next_generation)
    assert H.receiver_mutation_key(operation_namespace=ns, delivery_key=dk_a) != (
        H.receiver_mutation_key(operation_namespace=ns, delivery_key=dk_b))


def _rendered(payload: str) -> str:
    return call("rendered_request_semantics_digest", sealed_payload_digest=payload)


def _intent(payload: str) -> str:
    return H.mutation_intent_digest(
        receiver_binding_semantics_digest=call("receiver_binding_semantics_digest"),
        operation_semantics_digest=call("operation_semantics_digest"),
        rendered_request_semantics_digest=_rendered(payload),
    )


def test_payload_digest_changes_intent_but_not_delivery_key() -> None:
    """Rereading the same logical boundary with corrected bytes after an ambiguous submit gives
    the same delivery_key and a different intent: the REST_DELIVERY_INTENT_CONFLICT case."""
    params = set(SPEC_FIELDS["delivery_key"]) | set(SPEC_FIELDS["receiver_mutation_key"])
    assert not any("payload" in p or "digest" in p for p in params)

    original, corrected = _digest(0x33), _digest(0x34)
    key_before, key_after = call("delivery_key"), call("delivery_key")
    assert key_before == key_after
    assert _rendered(original) != _rendered(corrected)
    assert _intent(original) != _intent(corrected)
    assert _intent(original) == _intent(original)


def test_replacement_needs_an_explicit_generation() -> None:
    """Only a new explicit generation (scheduled_interval_end_utc, correction_revision) gives a
    new delivery key; the generation is an ordered tuple, not an opaque label."""
    end = dt.datetime(2026, 8, 2, tzinfo=UTC)
    keys = {
        call("delivery_key", explicit_generation=(end, 0)),
        call("delivery_key", explicit_generation=(end, 1)),
        call("delivery_key", explicit_generation=(end + dt.timedelta(days=1), 0)),
        call("delivery_key", explicit_generation=(0, end)),
    }
    assert len(keys) == 4
    assert call("delivery_key", explicit_generation=[end, 0]) == call(
        "delivery_key", explicit_generation=(end, 0))


@pytest.mark.parametrize(
    "name", ["receiver_binding_semantics_digest", "effect_conflict_domain"])
def test_principal_account_swap_changes_the_digest(name: str) -> None:
    base = BASELINES[name]
    swapped = call(name, remote_principal_id=base["remote_account_id"],
                   remote_account_id=base["remote_principal_id"])
    assert swapped != call(name)


def test_receiver_binding_excludes_secrets() -> None:
    """Secret rotation must not change the binding when semantics are unchanged: no credential,
    secret, token or password is an input."""
    params = SPEC_FIELDS["receiver_binding_semantics_digest"]
    assert not any(w in p for p in params for w in ("secret", "credential", "token", "password"))


def test_policy_only_change_keeps_semantics_and_intent_but_changes_profile() -> None:
    """Policy-only changes update execution_policy_digest but not operation_semantics_digest or
    mutation identity; the pinned profile_contract_digest still changes."""
    assert not set(SPEC_FIELDS["execution_policy_digest"]) & set(
        SPEC_FIELDS["operation_semantics_digest"] + SPEC_FIELDS["mutation_intent_digest"])
    semantics = call("operation_semantics_digest")
    policy_a = call("execution_policy_digest")
    policy_b = call("execution_policy_digest", retry_policy={"max_attempts": 5})
    assert policy_a != policy_b
    assert H.profile_contract_digest(
        operation_semantics_digest=semantics, execution_policy_digest=policy_a,
        profile_schema_id="s", profile_version=1,
    ) != H.profile_contract_digest(
        operation_semantics_digest=semantics, execution_policy_digest=policy_b,
        profile_schema_id="s", profile_version=1,
    )


def test_effect_conflict_domain_cannot_be_split_by_namespace_or_mutation_kind() -> None:
    params = set(SPEC_FIELDS["effect_conflict_domain"])
    assert not params & {"operation_namespace", "mutation_kind", "tenant_id", "environment_id",
                         "platform_instance_id", "namespace_revision", "delivery_key"}


def test_parent_plan_child_order_is_significant() -> None:
    children = BASELINES["parent_plan_digest"]["ordered_child_descriptors"]
    assert call("parent_plan_digest", ordered_child_descriptors=children[::-1]) != call(
        "parent_plan_digest")


# --------------------------------------------------------------------------------------
# Rejected inputs
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "overrides"),
    [
        ("delivery_key", {"explicit_generation": (dt.datetime(2026, 8, 2), 0)}),
        ("delivery_key", {"explicit_generation": (
            dt.datetime(2026, 8, 2, tzinfo=dt.timezone(dt.timedelta(hours=-5))), 0)}),
        ("delivery_key", {"target_effect_scope": {"at": dt.datetime(2026, 8, 2)}}),
        ("execution_policy_digest", {"retry_policy": {"jitter": float("nan")}}),
        ("execution_policy_digest", {"timeout_policy": {"read_s": float("inf")}}),
        ("operation_semantics_digest", {"verification_contract": {"ratio": float("-inf")}}),
    ],
    ids=["naive-generation", "non-utc-generation", "naive-scope", "nan", "inf", "-inf"],
)
def test_non_canonical_inputs_raise_value_error(name: str, overrides: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        call(name, **overrides)


@pytest.mark.parametrize(
    ("name", "overrides"),
    [
        ("delivery_key", {"target_effect_scope": {"ids": {1, 2}}}),
        ("delivery_key", {"source_boundary": {"token": object()}}),
        ("execution_policy_digest", {"retention_policy": {"keys": frozenset({"a"})}}),
        ("operation_namespace", {"namespace_revision": object()}),
        ("execution_policy_digest", {"retry_policy": {1: "int key"}}),
    ],
    ids=["set", "object", "frozenset", "object-scalar", "int-key"],
)
def test_unsupported_types_raise_type_error(name: str, overrides: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        call(name, **overrides)


# --------------------------------------------------------------------------------------
# Cross-process stability and golden digests
# --------------------------------------------------------------------------------------

_GOLDEN_SCRIPT = textwrap.dedent(
    """
    import datetime as dt, json
    from dpone.contracts import identity as H
    d = lambda n: "sha256:" + f"{n:02x}" * 32
    ns = H.operation_namespace(platform_instance_id="dpone-prod-eu1", tenant_id="acme",
                               environment_id="production", namespace_revision=3)
    dk = H.delivery_key(
        logical_route_id="measurements-to-mock",
        target_effect_scope={"resource": "measurements", "from": dt.date(2026, 8, 1),
                             "to": dt.date(2026, 8, 2), "inclusive_to": False},
        source_boundary={"interval": ["2026-08-01", "2026-08-02"], "occurrence": 1},
        mutation_kind="partition_replace",
        explicit_generation=(dt.datetime(2026, 8, 2, tzinfo=dt.timezone.utc), 0),
    )
    intent = H.mutation_intent_digest(receiver_binding_semantics_digest=d(1),
                                      operation_semantics_digest=d(2),
                                      rendered_request_semantics_digest=d(3))
    print(json.dumps({"operation_namespace": ns, "delivery_key": dk,
                      "mutation_intent_digest": intent,
                      "encode": H.encode({"b": [1, "1", True, 1.5, None], "a": b"\\x00"}).hex()}))
    """
)

# Computed once with the dpone.H.v1 encoding; a change here is an identity-breaking change.
GOLDEN = {
    "operation_namespace":
        "sha256:da9bd5a9c8390aaf8a4d6c4c95ae1866cef700cf3aafe1688f4825bc8cc1d278",
    "delivery_key":
        "sha256:abcd5b8733cf9afd98835d79ecc3c517a8f4405b7b713238222ee7f2eaa7dbdc",
    "mutation_intent_digest":
        "sha256:6eb12a98c3ea6e527f27032cda9ae5b30446e6409df4952bd67a9a81d76aecdc",
    "encode": (
        "4d000000000000007b000000000000000253000000000000000161590000000000000001"
        "00530000000000000001624c000000000000004c00000000000000054900000000000000"
        "013153000000000000000131420000000000000001014600000000000000143078312e38"
        "303030303030303030303030702b304e0000000000000000"
    ),
}


def _run_golden(hash_seed: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run(
        [sys.executable, "-c", _GOLDEN_SCRIPT],
        capture_output=True, text=True, check=True, env=env, timeout=60,
    )
    return json.loads(proc.stdout)


def test_digests_are_stable_across_processes_and_match_goldens() -> None:
    in_process: dict[str, str] = {}
    exec(compile(_GOLDEN_SCRIPT.replace("print(", "_out = ("), "<golden>", "exec"), in_process)
    expected = json.loads(in_process["_out"])
    assert _run_golden("1") == expected
    assert _run_golden("4242") == expected
    assert expected == GOLDEN
