"""The environment file at run time: its control-plane policy (leases), read from the registry.

A plan compiles in only the environment's identity (:class:`~dpone.contracts.binding.Environment`);
what an environment decides at run time, such as how long a lease lasts, is read from the same
file when a run starts, so tuning it changes no plan digest.
"""

from __future__ import annotations

from pathlib import Path

from dpone.compiler._registry import Registry
from dpone.compiler._secrets import refuse_secret_values
from dpone.compiler._validate import validate_document
from dpone.contracts import Location
from dpone.contracts.binding import EnvironmentDocument, LeasePolicy


def environment_document(registry_root: Path, ref: str) -> EnvironmentDocument:
    """``environments/<ref>.yaml`` under ``registry_root``, validated (unknown fields refused)."""
    registry = Registry(registry_root)
    doc = registry.load("environments", ref, referenced_at=Location(file=str(registry_root)),
                        ref_label="environment")
    refuse_secret_values(doc)
    return validate_document(EnvironmentDocument, doc)


def lease_policy(registry_root: Path, ref: str) -> LeasePolicy:
    """The lease policy of environment ``ref``; the default when the registry has no file for
    it (a pinned plan run from another registry)."""
    if not (registry_root / "environments" / f"{ref}.yaml").is_file():
        return LeasePolicy()
    return environment_document(registry_root, ref).leases
