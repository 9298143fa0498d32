"""Freeze and seal one workload of a registry into a local artifact store (integration suites)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from dpone.artifacts import LocalArtifactStore
from dpone.compiler import compile_workload
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.contracts.source_parent import SourceParent
from dpone.executor.seal import seal_boundary


@dataclass(frozen=True)
class SealedExample:
    plan: RestDeliveryPlan
    plan_digest: str
    parent: SourceParent
    topology: SealedTopology
    store: LocalArtifactStore


def seal_example(workload: Path, registry: Path, root: Path,
                 interval: tuple[dt.date, dt.date]) -> SealedExample:
    """``workload`` compiled against ``registry``, frozen over ``interval`` and sealed at ``root``."""
    compiled = compile_workload(workload, registry)
    store = LocalArtifactStore(root)
    sealed = seal_boundary(compiled.plan, compiled.digest, store, registry_root=registry,
                           interval_start=interval[0], interval_end=interval[1])
    return SealedExample(compiled.plan, compiled.digest, sealed.parent, sealed.topology, store)
