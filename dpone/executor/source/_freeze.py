"""freeze_source: one source boundary -> one immutable, sorted, content-addressed parent."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

from dpone.contracts import DponeError, content_digest
from dpone.contracts.mapping import MappedColumn, PayloadMapping
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import AdoptsFiles, ArtifactRef, ImmutableArtifactPort
from dpone.contracts.secret import Secret
from dpone.contracts.source_parent import (
    PARENT_KEY_PREFIX,
    SOURCE_PARENT_SCHEMA_ID,
    ParentBoundary,
    ParentColumn,
    SourceParent,
)
from dpone.executor.source import _arrow, _file
from dpone.executor.source._boundary import Selection
from dpone.executor.source._csv import CsvFileReader
from dpone.executor.source._materialize import MEMORY_BUDGET, ParentBuilder, sort_order
from dpone.executor.source._parent_writer import WrittenParent, file_chunks
from dpone.executor.source._parquet import ParquetFileReader
from dpone.executor.source._reading import SourceReader


def parent_key(digest: str) -> str:
    """Where the parent's IPC file lives: ``parents/sha256/<hex>.arrow``."""
    return f"{PARENT_KEY_PREFIX}{digest.removeprefix('sha256:')}.arrow"


def parent_document_key(parent: SourceParent) -> str:
    """Where the parent's own JSON lives: ``parents/sha256/<hex of those bytes>.json``."""
    digest = content_digest(parent.canonical_bytes())
    return f"{PARENT_KEY_PREFIX}{digest.removeprefix('sha256:')}.json"


def _scope_column(plan: RestDeliveryPlan) -> MappedColumn:
    scope = plan.mapping.column(plan.source_boundary.scope_field)
    if scope is None or scope.type != "date" or scope.nullable:
        raise DponeError(code="workload.scope_field_unknown",
                         message=f"scope field {plan.source_boundary.scope_field!r} is not a "
                                 f"non-null date column of mapping {plan.mapping.id}")
    return scope


def _metadata(plan: RestDeliveryPlan, boundary: ParentBoundary) -> dict[str, str]:
    """Schema metadata: only what defines the rows (never the source, a time or a host)."""
    keys, _order = sort_order(plan.mapping, plan.source_boundary.scope_field)
    return {
        "dpone.schema": SOURCE_PARENT_SCHEMA_ID,
        "dpone.mapping_digest": plan.mapping_digest,
        "dpone.scope_field": plan.source_boundary.scope_field,
        "dpone.sort_keys": json.dumps(list(keys), separators=(",", ":")),
        "dpone.boundary": json.dumps(
            {"from_date": boundary.from_date.isoformat(), "to_date": boundary.to_date.isoformat(),
             "time_zone": boundary.time_zone}, sort_keys=True, separators=(",", ":")),
    }


@contextlib.contextmanager
def _reader(plan: RestDeliveryPlan, scope: MappedColumn, boundary: ParentBoundary,
            registry_root: Path, postgres_dsn: Secret | str | None) -> Iterator[SourceReader]:
    source = plan.source
    mapping: PayloadMapping = plan.mapping
    reader: SourceReader
    if source.type == "postgres":
        if not postgres_dsn:
            raise DponeError(code="source.unavailable",
                             message=f"no connection was given for source connection "
                                     f"{source.connection_ref!r}")
        # psycopg belongs to the optional `postgres` extra: import it only for a PostgreSQL source.
        from dpone.executor.source._postgres import PostgresReader  # noqa: PLC0415

        dsn = postgres_dsn.reveal() if isinstance(postgres_dsn, Secret) else postgres_dsn
        reader = PostgresReader(dsn, source, mapping, scope, boundary.from_date,
                                boundary.to_date)
    elif source.format == "parquet":
        reader = ParquetFileReader(_file.resolve(registry_root, source.registry_path), mapping,
                                   scope, boundary.from_date, boundary.to_date)
    elif source.format == "csv":
        reader = CsvFileReader(_file.resolve(registry_root, source.registry_path), mapping)
    else:
        raise DponeError(code="input.invalid_argument",
                         message=f"file source format {source.format!r} is not supported")
    try:
        yield reader
    finally:
        reader.close()


def _published(ref: ArtifactRef, digest: str, size: int) -> ArtifactRef:
    if ref.digest != digest or ref.size != size:
        raise DponeError(code="artifacts.unavailable",
                         message="the artifact store recorded other bytes than the parent written",
                         details={"key": ref.key})
    return ref


def _publish(artifacts: ImmutableArtifactPort, written: WrittenParent) -> ArtifactRef:
    key = parent_key(written.digest)
    if isinstance(artifacts, AdoptsFiles):
        ref = artifacts.adopt_file(key, written.path, written.digest, written.size)
    else:
        ref = artifacts.put_stream(key, file_chunks(written.path))
    return _published(ref, written.digest, written.size)


def freeze_source(plan: RestDeliveryPlan, *, registry_root: Path, interval_start: dt.date,
                  interval_end: dt.date, artifacts: ImmutableArtifactPort,
                  postgres_dsn: Secret | str | None = None, scratch_dir: Path | None = None,
                  memory_budget: int = MEMORY_BUDGET) -> SourceParent:
    """Read the plan's source for ``[interval_start, interval_end)``, map, sort and publish it.

    The parent's IPC file goes to ``parents/sha256/<hex>.arrow`` and the returned document to
    ``parents/sha256/<hex>.json`` (each named by the SHA-256 of its own bytes). A PostgreSQL
    snapshot stays open until both are published and is closed before this returns. A file
    source is read from ``registry_root / plan.source.registry_path``, a PostgreSQL source
    through ``postgres_dsn`` (see :func:`source_dsn`); ``scratch_dir`` holds the
    parent while it is written (default: the system temporary directory): a local store on the
    same filesystem adopts that file as it is (no copy, no second hash), any other store gets a
    copy
    and, when the boundary holds more than ``memory_budget`` bytes of Arrow data, a spill of the
    rows about as large as the parent: the freeze then holds about twice that budget in memory
    whatever the size of the boundary (:mod:`dpone.executor.source._materialize`). The budget
    changes no byte of the parent.
    """
    _arrow.bounded_memory_pool()
    if interval_end < interval_start:
        raise DponeError(code="input.invalid_argument",
                         message=f"the interval end {interval_end} is before its start "
                                 f"{interval_start}")
    boundary = ParentBoundary(from_date=interval_start, to_date=interval_end)
    scope = _scope_column(plan)
    mapping = plan.mapping
    schema = _arrow.parent_schema(mapping, _metadata(plan, boundary))
    selection = Selection(mapping, scope, interval_start, interval_end)
    with _reader(plan, scope, boundary, registry_root, postgres_dsn) as reader, \
            tempfile.TemporaryDirectory(prefix="dpone-parent-", dir=scratch_dir) as scratch, \
            ParentBuilder(mapping, scope.name, schema, scratch=Path(scratch),
                          memory_budget=memory_budget) as builder:
        for first_record, batch in reader.batches():
            builder.add(selection.apply(batch, first_record))
        source_version = reader.version()
        written = builder.write(Path(scratch) / "parent.arrow")
        ref = _publish(artifacts, written)
        keys, _order = sort_order(mapping, scope.name)
        parent = SourceParent(
            artifact=ref,
            row_count=written.row_count,
            columns=tuple(ParentColumn(name=c.name, type=c.type, nullable=c.nullable)
                          for c in mapping.columns),
            sort_keys=keys,
            scope_field=scope.name,
            boundary=boundary,
            source=source_version,
            mapping_digest=plan.mapping_digest,
            scope_index=written.scope_index,
            complete=True,
        )
        artifacts.put_bytes(parent_document_key(parent), parent.canonical_bytes())
    return parent
