"""seal_boundary: one source boundary frozen into its parent and every child sealed, the one
path by which the CLI, the test suites and the benchmarks turn a boundary into sealed payloads."""

from __future__ import annotations

import contextlib
import datetime as dt
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dpone.codecs import PayloadEncodingError
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedTopology
from dpone.contracts.secret import Secret
from dpone.contracts.source_parent import SourceParent
from dpone.executor.seal._payload import encoding_error
from dpone.executor.seal._seal import Progress, seal_all
from dpone.executor.source import freeze_source
from dpone.observability import tracing
from dpone.observability.stages import stage


@dataclass(frozen=True, slots=True)
class SealedBoundary:
    """The frozen parent of a boundary and its sealed topology."""

    parent: SourceParent
    topology: SealedTopology


@contextlib.contextmanager
def _parent_file(store: ImmutableArtifactPort, parent: SourceParent,
                 scratch_dir: Path | None) -> Iterator[Path]:
    """A local path of the parent's IPC file: the store's own file, or a scratch copy."""
    local = store.local_file(parent.artifact.key)
    if local is not None:
        yield local
        return
    with tempfile.TemporaryDirectory(prefix="dpone-seal-", dir=scratch_dir) as scratch:
        path = Path(scratch) / "parent.arrow"
        with path.open("wb") as handle:
            for chunk in store.open_stream(parent.artifact.key):
                handle.write(chunk)
        yield path


def seal_boundary(plan: RestDeliveryPlan, plan_digest: str, store: ImmutableArtifactPort, *,
                  registry_root: Path, interval_start: dt.date, interval_end: dt.date,
                  postgres_dsn: Secret | str | None = None, progress: Progress | None = None,
                  on_frozen: Callable[[SourceParent], None] | None = None,
                  scratch_dir: Path | None = None) -> SealedBoundary:
    """Freeze ``[interval_start, interval_end)`` of the plan's source into one parent
    (:func:`~dpone.executor.source.freeze_source`) and seal every child of it
    (:func:`seal_all`), publishing everything create-if-absent to ``store``.

    The sealer reads the parent in place when the store keeps it as a local file, else from a
    scratch copy. ``on_frozen(parent)`` is called once the parent is published, before any
    child is sealed; ``progress(done, total)`` after each sealed child. A value the payload
    codec cannot encode is ``source.type_mismatch`` naming its column (never the value).

    Timed as two stages: ``freeze`` (span ``dpone.freeze``) and ``seal`` (span ``dpone.seal``,
    with a ``dpone.seal.child`` span per child published).
    """
    fields = {"workload": plan.logical_route_id, "plan_digest": plan_digest,
              "environment": plan.environment.ref, "interval_start": interval_start.isoformat(),
              "interval_end": interval_end.isoformat()}
    with stage("freeze", **fields) as frozen:
        parent = freeze_source(plan, registry_root=registry_root, interval_start=interval_start,
                               interval_end=interval_end, artifacts=store,
                               postgres_dsn=postgres_dsn, scratch_dir=scratch_dir)
        frozen.set_attributes(tracing.attributes({"parent_digest": parent.artifact.digest,
                                                  "rows": parent.row_count}))
    if on_frozen is not None:
        on_frozen(parent)
    with stage("seal", **fields, parent_digest=parent.artifact.digest) as sealing:
        try:
            with _parent_file(store, parent, scratch_dir) as path:
                topology = seal_all(plan, plan_digest, parent, path, store, progress=progress,
                                    scratch_dir=scratch_dir)
        except PayloadEncodingError as error:
            raise encoding_error(error) from error
        sealing.set_attributes(tracing.attributes({
            "parent_plan_digest": topology.parent_plan_digest, "rows": topology.total_rows,
            "children": len(topology.children)}))
    return SealedBoundary(parent, topology)
