"""What `dpone profile certify` certifies: one profile, through one binding, in one environment.

The profile, the binding and the binding's environment are loaded from the registry as a
compilation loads them (bounded YAML, raw checks, secret scan, closed schema, semantic profile
checks, binding rules, the TLS and network policies the binding names), so a certification is
bound to exactly the digests a plan of the same files would carry. Before any request the
binding must allow the run: it names a ``certification_scope`` (the sandbox resource the live
cases write to), the scope allows the level, and the binding belongs to the environment asked
for. Each refusal is located in the binding file and exits 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from dpone.compiler._binding_rules import binding_policies, check_binding
from dpone.compiler._digests import binding_digest, profile_digests
from dpone.compiler._located import located_error
from dpone.compiler._profile_rules import check_profile, check_raw_profile
from dpone.compiler._registry import Registry
from dpone.compiler._secrets import refuse_secret_values
from dpone.compiler._validate import validate_document
from dpone.compiler.compile import expect_profile_identity
from dpone.contracts import DponeError, Location
from dpone.contracts.binding import (
    ConnectionBinding,
    EnvironmentDocument,
    NetworkPolicy,
    TlsPolicy,
)
from dpone.contracts.certification import CertificationScope, Level
from dpone.contracts.profile import OperationProfile
from dpone.contracts.workload import ProfileRef

_REF = TypeAdapter(ProfileRef)


@dataclass(frozen=True, slots=True)
class CertificationSubject:
    """The resolved profile, binding and environment of one certification run."""

    profile: OperationProfile
    templates: dict[str, Any]
    """The profile's canonical parsed templates (what its digests were computed from)."""
    operation_semantics_digest: str
    profile_contract_digest: str
    binding: ConnectionBinding
    binding_digest: str
    scope: CertificationScope
    environment: EnvironmentDocument
    tls_policy: TlsPolicy
    network_policy: NetworkPolicy


def load_certification_subject(registry_root: Path, profile_ref: str, binding_id: str,
                               environment: str, level: Level) -> CertificationSubject:
    """The subject of ``dpone profile certify PROFILE --binding B --environment E --level L``,
    or the first refusal: a file that does not load or compile, a binding without a
    ``certification_scope`` (``certification.scope_missing``), a level its scope does not allow
    (``certification.level_not_allowed``), a binding of another environment
    (``certification.environment_mismatch``)."""
    try:
        _REF.validate_python(profile_ref)
    except ValidationError:
        raise DponeError(code="registry.invalid_ref", message=f"{profile_ref!r} is not an "
                         "operation profile ref (id@version)",
                         hint="Name the profile as id@version, e.g. mock.dataset-jobs@1.") from None
    registry = Registry(registry_root)
    at = Location(file=str(registry_root))
    pdoc = registry.load("profiles", profile_ref, referenced_at=at, ref_label="operation profile")
    check_raw_profile(pdoc)
    refuse_secret_values(pdoc)
    profile = validate_document(OperationProfile, pdoc)
    expect_profile_identity(pdoc, profile_ref, profile)
    templates = check_profile(profile, pdoc)
    semantics, _policy, contract = profile_digests(profile, templates)

    bdoc = registry.load("bindings", binding_id, referenced_at=at, ref_label="connection binding")
    refuse_secret_values(bdoc)
    binding = validate_document(ConnectionBinding, bdoc)
    if binding.id != binding_id:
        raise located_error("registry.id_mismatch", f"file declares {binding.id!r} but is "
                            f"referenced as {binding_id!r}", bdoc, ("id",),
                            hint="make the file name match its id")
    if binding.environment_ref != environment:
        raise located_error(
            "certification.environment_mismatch", f"binding {binding.id} belongs to environment "
            f"{binding.environment_ref}, not {environment}: a certification is bound to the "
            "environment its binding reaches", bdoc, ("environment_ref",),
            hint=f"Certify with --environment {binding.environment_ref}, or name a binding of "
                 f"{environment}.")
    scope = binding.certification_scope
    if scope is None:
        raise located_error(
            "certification.scope_missing", f"binding {binding.id} names no certification_scope: "
            "it lets no certification write to its receiver", bdoc, ("id",),
            hint="Add `certification_scope: {resource: <sandbox resource>, levels: [static, "
                 f"local-live]}}` to bindings/{binding.id}.yaml (a resource of the receiver's "
                 "sandbox, never a production one).")
    if level not in scope.levels:
        raise located_error(
            "certification.level_not_allowed", f"binding {binding.id} allows certification "
            f"levels {', '.join(scope.levels)}, not {level}", bdoc,
            ("certification_scope", "levels"),
            hint=f"Certify at one of {', '.join(scope.levels)}, or add {level} to the binding's "
                 "certification_scope.levels once its receiver's sandbox allows it.")
    edoc = registry.load("environments", environment, referenced_at=bdoc.locate(
        ("environment_ref",)), ref_label="environment")
    refuse_secret_values(edoc)
    environment_file = validate_document(EnvironmentDocument, edoc)
    if environment_file.id != environment:
        raise located_error("registry.id_mismatch", f"file declares {environment_file.id!r} but "
                            f"is referenced as {environment!r}", edoc, ("id",),
                            hint="make the file name match its id")
    check_binding(binding, environment_file.identity(), bdoc)
    tls_policy, network_policy = binding_policies(binding, environment_file, bdoc, edoc)
    return CertificationSubject(
        profile=profile, templates=templates, operation_semantics_digest=semantics,
        profile_contract_digest=contract, binding=binding, binding_digest=binding_digest(binding),
        scope=scope, environment=environment_file, tls_policy=tls_policy,
        network_policy=network_policy)
