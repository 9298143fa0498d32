"""What the catalog describes, read from a registry the way the compiler reads it.

Profiles (``profiles/*.yaml``) go through every check a compilation applies to a profile
(bounded YAML, raw rules, the secret scan, the closed schema, the file's id and version, the
semantic rules) and get the digests a plan would pin. Workloads (``workloads/**``), their
connection bindings and the environments (``environments/*.yaml``) are loaded and validated as
the compiler loads them; a reference a workload makes that the registry cannot resolve is the
compiler's error. Certifications (``certifications/**/*.json``) are read by the certification
gate's reader: a file that is not a certification proves nothing and is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import TypeAdapter, ValidationError

from dpone.compiler._digests import binding_digest, profile_digests
from dpone.compiler._profile_rules import check_profile, check_raw_profile
from dpone.compiler._registry import Registry
from dpone.compiler._secrets import refuse_secret_values
from dpone.compiler._validate import validate_document
from dpone.compiler._yaml import LoadedDocument, load_yaml_file
from dpone.compiler.certification_gate import effective_policy, registry_certifications
from dpone.compiler.compile import expect_profile_identity
from dpone.compiler.environment_file import load_environment
from dpone.contracts import DponeError, Location, canonical_json, content_digest
from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.certification import CertificationPolicy, SinkCertification
from dpone.contracts.profile import OperationProfile
from dpone.contracts.workload import FileSource, ProfileRef, Workload

SOURCE_KINDS: Final = ("file csv", "file parquet", "postgres")
"""The rows of the source/sink matrix: every kind of source a workload can name."""
WORKLOAD_SUFFIXES: Final = frozenset({".yaml", ".yml"})
_REF = TypeAdapter(ProfileRef)


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    profile: OperationProfile
    file: str
    """Relative to the registry root."""
    contract_digest: str
    semantics_digest: str


@dataclass(frozen=True, slots=True)
class Usage:
    """One workload: the profile it delivers through, its source and where it is bound."""

    workload: str
    file: str
    source_kind: str
    profile: str
    binding: str
    environment: str
    mutation: str
    resource: str


@dataclass(frozen=True, slots=True)
class CertificationEntry:
    file: str
    certification: SinkCertification
    digest: str
    """The content address of the certification document (its canonical JSON)."""


@dataclass(frozen=True, slots=True)
class Inventory:
    profiles: tuple[ProfileEntry, ...]
    usages: tuple[Usage, ...]
    binding_digests: Mapping[str, str]
    """A binding of the registry -> its receiver binding semantics digest."""
    policies: Mapping[str, CertificationPolicy | None]
    """An environment of the registry -> what it requires of profiles, as the certification
    gate applies it (a production environment without a policy gets the production default;
    None: nothing)."""
    certifications: tuple[CertificationEntry, ...]

    def usages_of(self, ref: str) -> tuple[Usage, ...]:
        return tuple(usage for usage in self.usages if usage.profile == ref)

    def certifications_of(self, ref: str) -> tuple[CertificationEntry, ...]:
        return tuple(entry for entry in self.certifications
                     if entry.certification.profile == ref)


def _yaml_files(directory: Path, recursive: bool = False) -> list[Path]:
    if not directory.is_dir():
        return []
    found = directory.rglob("*") if recursive else directory.iterdir()
    return sorted(path for path in found if path.suffix in WORKLOAD_SUFFIXES and path.is_file())


def _profile(registry: Registry, path: Path) -> ProfileEntry:
    ref = path.stem
    where = Location(file=registry.display(path))
    try:
        _REF.validate_python(ref)
    except ValidationError:
        raise DponeError(code="registry.invalid_ref", location=where,
                         message=f"{path.name} does not name an operation profile ref "
                                 "(profiles/<id>@<version>.yaml)") from None
    doc = registry.load("profiles", ref, referenced_at=where, ref_label="operation profile")
    check_raw_profile(doc)
    refuse_secret_values(doc)
    profile = validate_document(OperationProfile, doc)
    expect_profile_identity(doc, ref, profile)
    semantics, _, contract = profile_digests(profile, check_profile(profile, doc))
    return ProfileEntry(profile, f"profiles/{path.name}", contract, semantics)


def _binding(registry: Registry, name: str, where: Location) -> ConnectionBinding:
    doc = registry.load("bindings", name, referenced_at=where, ref_label="connection binding")
    refuse_secret_values(doc)
    binding = validate_document(ConnectionBinding, doc)
    if binding.id != name:
        raise DponeError(code="registry.id_mismatch", location=doc.locate(("id",)),
                         message=f"file declares {binding.id!r} but is named {name!r}",
                         hint="make the file name match its id")
    return binding


def _usage(registry: Registry, path: Path, doc: LoadedDocument, workload: Workload,
           refs: set[str], bindings: dict[str, ConnectionBinding]) -> Usage:
    sink = workload.sink
    if sink.operation_profile_ref not in refs:
        registry.load("profiles", sink.operation_profile_ref, ref_label="operation profile",
                      referenced_at=doc.locate(("sink", "operation_profile_ref")))
    binding = bindings.get(sink.connection_ref)
    if binding is None:
        binding = _binding(registry, sink.connection_ref, doc.locate(("sink", "connection_ref")))
        bindings[binding.id] = binding
    source = workload.source
    kind = f"file {source.format}" if isinstance(source, FileSource) else "postgres"
    return Usage(workload=workload.name, file=registry.relative(path) or path.name,
                 source_kind=kind,
                 profile=sink.operation_profile_ref, binding=binding.id,
                 environment=binding.environment_ref, mutation=sink.mutation.kind,
                 resource=sink.resource)


def read_registry(root: Path, display: str | None = None) -> Inventory:
    """Every profile, workload, binding, environment policy and certification of the registry
    at ``root`` (named ``display`` in errors); a file the compiler would refuse is refused with
    the compiler's error."""
    registry = Registry(root, display)
    profiles = sorted((_profile(registry, path) for path in _yaml_files(registry.root / "profiles")),
                      key=lambda entry: (entry.profile.id, entry.profile.version))
    refs = {entry.profile.ref for entry in profiles}
    bindings = {path.stem: _binding(registry, path.stem, Location(file=registry.display(path)))
                for path in _yaml_files(registry.root / "bindings")}
    usages = []
    for path in _yaml_files(registry.root / "workloads", recursive=True):
        doc = load_yaml_file(path, registry.display(path))
        refuse_secret_values(doc)
        usages.append(_usage(registry, path, doc, validate_document(Workload, doc), refs, bindings))
    environments = [load_environment(path, path.stem, registry.display(path))
                    for path in _yaml_files(registry.root / "environments")]
    policies = {environment.id: effective_policy(environment.certification, environment.tier)
                for environment in environments}
    certifications = tuple(
        CertificationEntry(registry.relative(path) or path.name, found, content_digest(
            canonical_json(found.model_dump(mode="json", by_alias=True))))
        for path, found in registry_certifications(registry.root))
    return Inventory(
        profiles=tuple(profiles),
        usages=tuple(sorted(usages, key=lambda usage: (usage.workload, usage.file))),
        binding_digests={name: binding_digest(binding) for name, binding in sorted(bindings.items())},
        policies=policies,
        certifications=certifications)
