"""Compile workload + operation profile + connection binding + mapping into one immutable plan."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpone.compiler._binding_rules import binding_policies, check_binding
from dpone.compiler._digests import (
    binding_digest,
    conflict_domain,
    namespace_digest,
    profile_digests,
)
from dpone.compiler._mapping_rules import check_raw_mapping
from dpone.compiler._profile_rules import check_profile, check_raw_profile
from dpone.compiler._registry import Registry
from dpone.compiler._remote_identity import check_remote_identity
from dpone.compiler._secrets import refuse_secret_values
from dpone.compiler._validate import validate_document
from dpone.compiler._yaml import LoadedDocument, YamlPath, load_yaml_file
from dpone.compiler.certification_gate import Subject, check_certification, effective_policy
from dpone.compiler.environment_file import check_control_plane
from dpone.compiler.migrations import refuse_older_format
from dpone.contracts import DponeError, canonical_json, content_digest
from dpone.contracts.binding import ENVIRONMENT_SCHEMA_ID, ConnectionBinding, EnvironmentDocument
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.plan import (
    PLAN_SCHEMA_ID,
    PLANNER_ALGORITHM_VERSION,
    EffectiveLimits,
    FenceDecision,
    ResolvedBinding,
    ResolvedEnvironment,
    ResolvedProfile,
    ResolvedSource,
    RestDeliveryPlan,
    SourceBoundaryContract,
)
from dpone.contracts.profile import OperationProfile
from dpone.contracts.workload import FileSource, Workload
from dpone.observability import tracing
from dpone.observability.stages import stage


@dataclass(frozen=True)
class CompiledPlan:
    """A plan and its canonical bytes; ``digest`` is the content address of those bytes."""

    plan: RestDeliveryPlan
    canonical: bytes
    digest: str
    checked_files: tuple[str, ...]

    @property
    def file_name(self) -> str:
        return f"plans/sha256/{self.digest.removeprefix('sha256:')}.json"


def _fail(code: str, message: str, doc: LoadedDocument, path: YamlPath,
          hint: str | None = None) -> DponeError:
    return DponeError(code=code, message=message, location=doc.locate(path), hint=hint)


def _load_checked(registry: Registry, kind: str, name: str, at: LoadedDocument, path: YamlPath,
                  label: str, specific: Callable[[LoadedDocument], None] | None = None
                  ) -> LoadedDocument:
    """Load a referenced file; its specific raw checks run before the generic secret scan."""
    doc = registry.load(kind, name, referenced_at=at.locate(path), ref_label=label)
    if specific is not None:
        specific(doc)
    refuse_secret_values(doc)
    return doc


def _expect_identity(doc: LoadedDocument, expected: str, actual: str, path: YamlPath) -> None:
    if expected != actual:
        raise _fail("registry.id_mismatch", f"file declares {actual!r} but is referenced as "
                    f"{expected!r}", doc, path, hint="make the file name match its id and version")


def expect_profile_identity(doc: LoadedDocument, ref: str, profile: OperationProfile) -> None:
    """``registry.id_mismatch`` unless the file of ``ref`` declares that id and version."""
    expected_id, expected_version = ref.split("@")
    _expect_identity(doc, expected_id, profile.id, ("id",))
    _expect_identity(doc, expected_version, str(profile.version), ("version",))


def _refuse_deprecated(profile: OperationProfile, pdoc: LoadedDocument,
                       wdoc: LoadedDocument) -> None:
    """A deprecated profile compiles no new plan; plans compiled before run on by digest."""
    if profile.lifecycle == "deprecated":
        referenced = wdoc.locate(("sink", "operation_profile_ref")).render()
        raise _fail("profile.deprecated", f"operation profile {profile.ref} is deprecated: it "
                    f"compiles no new plan (referenced at {referenced})", pdoc, ("lifecycle",),
                    hint=f"Point sink.operation_profile_ref at the successor of {profile.ref}; "
                         "plans compiled before the deprecation keep running by digest.")


def _effective_limits(profile: OperationProfile, workload: Workload,
                      doc: LoadedDocument) -> EffectiveLimits:
    window = profile.limits.preferred_window_days
    wanted = workload.sink.delivery_overrides.preferred_window_days
    if wanted is not None and not window.min <= wanted <= window.max:
        raise _fail("workload.override_out_of_range",
                    f"preferred_window_days {wanted} is outside the profile's range "
                    f"[{window.min}, {window.max}]", doc,
                    ("sink", "delivery_overrides", "preferred_window_days"))
    return EffectiveLimits(**profile.limits.model_dump(), window_days=wanted or window.default)


def _resolve_source(workload: Workload, workload_path: Path, registry: Registry,
                    doc: LoadedDocument) -> ResolvedSource:
    source = workload.source
    if not isinstance(source, FileSource):
        return ResolvedSource(type="postgres", connection_ref=source.connection_ref,
                              table=source.table, query=source.query)
    candidate = Path(source.path)
    if candidate.is_absolute():
        raise _fail("schema.invalid_value", f"source path {source.path!r} is absolute; it must "
                    "be relative to the workload file", doc, ("source", "path"),
                    hint="write a path relative to the workload file that stays inside the "
                         "registry, e.g. ../data/measurements.csv")
    resolved = workload_path.parent / candidate
    relative = registry.relative(resolved)
    if relative is None:
        raise _fail("schema.invalid_value", "source path resolves outside the registry root",
                    doc, ("source", "path"), hint="keep source files under the registry directory")
    if not resolved.is_file():
        raise _fail("input.not_found", f"source file not found: {registry.display(resolved)}",
                    doc, ("source", "path"))
    return ResolvedSource(type="file", format=source.format, registry_path=relative)


def _check_intent(workload: Workload, profile: OperationProfile, mapping: PayloadMapping,
                  doc: LoadedDocument) -> None:
    mutation = workload.sink.mutation
    if mutation.kind not in profile.supported_mutations:
        raise _fail("workload.mutation_unsupported", f"profile {profile.ref} does not support "
                    f"{mutation.kind}", doc, ("sink", "mutation", "kind"),
                    hint=f"choose one of: {', '.join(profile.supported_mutations)}")
    if mutation.kind == "incremental_append" and mutation.correction_revision != 0:
        raise _fail("workload.mutation_unsupported", "incremental_append takes no correction "
                    "revision", doc, ("sink", "mutation", "correction_revision"),
                    hint="remove correction_revision: an appended scope is never delivered "
                         "again; a correction generation needs kind partition_replace")
    column = mapping.column(mutation.scope.source_field)
    if column is None or column.type != "date" or column.nullable:
        raise _fail("workload.scope_field_unknown", f"scope field {mutation.scope.source_field!r} "
                    f"is not a non-null date column of mapping {mapping.id}", doc,
                    ("sink", "mutation", "scope", "source_field"))


def _capabilities(profile: OperationProfile, binding: ConnectionBinding, source: ResolvedSource,
                  certified: bool) -> tuple[str, ...]:
    body = profile.request.body.payload_format
    caps = {
        f"protocol.{profile.protocol_family}",
        f"body.{profile.request.body.type}",
        f"codec.{body.format}",
        f"compression.{body.compression}",
        f"auth.{binding.auth_provider}",
        f"fence.{profile.mutation_fence.type}" + (".certified" if certified else ""),
        f"source.{source.type}" + (f".{source.format}" if source.format else ""),
        "journal.revision_cas",
        "artifacts.create_if_absent",
    }
    return tuple(sorted(caps))


def compile_workload(workload_path: Path, registry_root: Path, *,
                     workload_display: str | None = None,
                     registry_display: str | None = None) -> CompiledPlan:
    """Resolve every reference offline and return the canonical plan; no network, no secrets.

    Timed as the ``compile`` stage: a span ``dpone.compile`` naming the workload, profile,
    environment and plan digest."""
    with stage("compile") as current:
        compiled = _compiled(workload_path, registry_root, workload_display, registry_display)
        plan = compiled.plan
        current.set_attributes(tracing.attributes({
            "workload": plan.logical_route_id, "plan_digest": compiled.digest,
            "profile": plan.profile.snapshot.id, "environment": plan.environment.ref}))
    return compiled


def _compiled(workload_path: Path, registry_root: Path, workload_display: str | None,
              registry_display: str | None) -> CompiledPlan:
    registry = Registry(registry_root, registry_display)
    wdoc = load_yaml_file(workload_path, workload_display)
    refuse_secret_values(wdoc)
    workload = validate_document(Workload, wdoc)
    sink = workload.sink

    pdoc = _load_checked(registry, "profiles", sink.operation_profile_ref, wdoc,
                         ("sink", "operation_profile_ref"), "operation profile", check_raw_profile)
    profile = validate_document(OperationProfile, pdoc)
    expect_profile_identity(pdoc, sink.operation_profile_ref, profile)
    _refuse_deprecated(profile, pdoc, wdoc)
    templates = check_profile(profile, pdoc)

    bdoc = _load_checked(registry, "bindings", sink.connection_ref, wdoc,
                         ("sink", "connection_ref"), "connection binding")
    binding = validate_document(ConnectionBinding, bdoc)
    _expect_identity(bdoc, sink.connection_ref, binding.id, ("id",))
    edoc = _load_checked(registry, "environments", binding.environment_ref, bdoc,
                         ("environment_ref",), "environment")
    environment_file = validate_document(EnvironmentDocument, edoc)
    _expect_identity(edoc, binding.environment_ref, environment_file.id, ("id",))
    check_control_plane(environment_file, edoc)
    environment = environment_file.identity()
    check_binding(binding, environment, bdoc)
    refuse_older_format(edoc, ENVIRONMENT_SCHEMA_ID, "compile")
    tls_policy, network_policy = binding_policies(binding, environment_file, bdoc, edoc)

    mdoc = _load_checked(registry, "mappings", sink.payload.mapping_ref, wdoc,
                         ("sink", "payload", "mapping_ref"), "payload mapping", check_raw_mapping)
    mapping = validate_document(PayloadMapping, mdoc)
    _expect_identity(mdoc, sink.payload.mapping_ref, mapping.id, ("id",))

    check_remote_identity(binding, environment, bdoc)
    _check_intent(workload, profile, mapping, wdoc)
    limits = _effective_limits(profile, workload, wdoc)
    source = _resolve_source(workload, workload_path, registry, wdoc)
    semantics, policy, contract = profile_digests(profile, templates)
    proof = check_certification(
        Subject(profile, contract, binding.id, binding_digest(binding), environment.id),
        effective_policy(environment_file.certification, environment.tier), registry_root, pdoc,
        edoc)
    certified = environment.id in profile.mutation_fence.certified_environments and proof.proven
    plan = RestDeliveryPlan(
        schema_id=PLAN_SCHEMA_ID,
        logical_route_id=workload.name,
        workload=workload,
        environment=ResolvedEnvironment(ref=environment.id,
                                        operation_namespace=namespace_digest(environment),
                                        snapshot=environment),
        profile=ResolvedProfile(ref=profile.ref, operation_semantics_digest=semantics,
                                execution_policy_digest=policy, profile_contract_digest=contract,
                                snapshot=profile),
        binding=ResolvedBinding(ref=binding.id,
                                receiver_binding_semantics_digest=binding_digest(binding),
                                snapshot=binding, tls_policy=tls_policy,
                                network_policy=network_policy),
        mapping=mapping,
        mapping_digest=content_digest(canonical_json(mapping.model_dump(mode="json", by_alias=True))),
        source=source,
        source_boundary=SourceBoundaryContract(
            scope_field=sink.mutation.scope.source_field,
            scope_type=sink.mutation.scope.type,
            generation_from=sink.mutation.generation_from,
            mutation_kind=sink.mutation.kind,
            correction_revision=sink.mutation.correction_revision,
            receiver_atomic_scope=sink.mutation.kind == "partition_replace",
        ),
        effect_conflict_domain=conflict_domain(binding, sink.resource, profile.effect_conflict_group),
        effective_limits=limits,
        fence=FenceDecision(type=profile.mutation_fence.type, certified_in_environment=certified,
                            certified_retention_s=proof.retention_s if certified else None),
        planner_algorithm_version=PLANNER_ALGORITHM_VERSION,
        required_capabilities=_capabilities(profile, binding, source, certified),
    )
    document: Any = plan.model_dump(mode="json", by_alias=True)
    canonical = canonical_json(document)
    files = tuple(d.file for d in (wdoc, pdoc, bdoc, edoc, mdoc))
    return CompiledPlan(plan=plan, canonical=canonical, digest=content_digest(canonical),
                        checked_files=files)
