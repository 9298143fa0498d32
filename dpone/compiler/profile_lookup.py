"""One operation profile of a registry by its ref (``id@version``), outside a compilation.

A command that needs a certified value of a profile a journal names (`dpone metrics serve` shows
each profile's ``timeouts.receipt_ttl_s``) loads ``profiles/<id>@<version>.yaml`` the way the
compiler does: bounded YAML, the profile schema, and the file's ``id`` and ``version`` matching
the ref. The ref is checked against the reference form first, so a ref read from a journal never
names a path outside ``profiles/``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from dpone.compiler._registry import Registry
from dpone.compiler._validate import validate_document
from dpone.compiler.compile import expect_profile_identity
from dpone.contracts import DponeError, Location
from dpone.contracts.profile import OperationProfile
from dpone.contracts.workload import ProfileRef

_REF = TypeAdapter(ProfileRef)


def load_profile(registry_root: Path, ref: str) -> OperationProfile:
    """The profile ``ref`` of the registry at ``registry_root``; ``registry.invalid_ref``,
    ``registry.not_found``, a YAML or schema error, or ``registry.id_mismatch`` otherwise."""
    try:
        _REF.validate_python(ref)
    except ValidationError:
        raise DponeError(code="registry.invalid_ref",
                         message=f"{ref!r} is not an operation profile ref (id@version)") from None
    registry = Registry(registry_root)
    doc = registry.load("profiles", ref, referenced_at=Location(file=str(registry_root)),
                        ref_label="operation profile")
    profile = validate_document(OperationProfile, doc)
    expect_profile_identity(doc, ref, profile)
    return profile
