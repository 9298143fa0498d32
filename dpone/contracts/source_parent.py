"""The frozen source parent `dpone.rest_source_parent.v1`.

One parent is the immutable authority for one source boundary: the rows of the half-open date
window ``[from_date, to_date)`` on the scope field, after the closed payload mapping, sorted, and
stored as one Arrow IPC file. Planning, sealing and recovery read this artifact, never the
source again.

The IPC file holds the mapped columns in mapping order with these Arrow types: ``string`` ->
``large_utf8``, ``int64`` -> ``int64``, ``float64`` -> ``double``, ``bool`` -> ``bool``, ``date``
-> ``date32``, ``timestamp`` -> ``timestamp[us, tz=UTC]``; a field is nullable exactly when the
mapped column is. Rows are ordered by ``sort_keys`` (ascending, nulls last); ties are broken by the
remaining columns in mapping order, so the order is total and does not depend on the order in
which the source returned its rows. ``scope_index`` locates every date's rows: because the scope
field sorts first, the rows of one date are one contiguous run.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Final, Literal

from pydantic import Field, model_validator

from dpone.contracts._base import Digest, StrictModel, canonical_json
from dpone.contracts.mapping import ColumnType
from dpone.contracts.ports import ArtifactRef

SOURCE_PARENT_SCHEMA_ID: Final = "dpone.rest_source_parent.v1"
PARENT_KEY_PREFIX: Final = "parents/sha256/"

_Count = Annotated[int, Field(ge=0)]


class ParentColumn(StrictModel):
    """One mapped column as stored in the parent (mapping name, mapping type, nullability)."""

    name: str
    type: ColumnType
    nullable: bool


class ParentBoundary(StrictModel):
    """The half-open date window ``[from_date, to_date)`` of the scope field, in UTC."""

    from_date: dt.date
    to_date: dt.date
    time_zone: Literal["UTC"] = "UTC"

    @model_validator(mode="after")
    def _ordered(self) -> ParentBoundary:
        if self.to_date < self.from_date:
            raise ValueError("to_date is before from_date")
        return self


class PostgresSnapshotVersion(StrictModel):
    """What a PostgreSQL read was consistent with: one REPEATABLE READ READ ONLY snapshot."""

    server_version: str
    snapshot: Annotated[str, Field(description="pg_current_snapshot() as text (xmin:xmax:xip)")]
    query_digest: Annotated[Digest, Field(description="content digest of the exact statement text")]


class ParentSource(StrictModel):
    """Which source was frozen and which immutable version of it.

    ``version`` is the SHA-256 of the file's bytes for a file source and the snapshot
    description for a PostgreSQL source.
    """

    type: Literal["file", "postgres"]
    format: Literal["csv", "parquet"] | None = None
    version: Digest | PostgresSnapshotVersion

    @model_validator(mode="after")
    def _version_matches_type(self) -> ParentSource:
        is_snapshot = isinstance(self.version, PostgresSnapshotVersion)
        if (self.type == "postgres") != is_snapshot:
            raise ValueError("a file source has a digest version; a postgres source a snapshot")
        if (self.type == "file") != (self.format is not None):
            raise ValueError("format is given exactly for file sources")
        return self


class ScopeIndexEntry(StrictModel):
    """The contiguous rows ``[first_row, first_row + row_count)`` of one scope date."""

    date: dt.date
    first_row: _Count
    row_count: Annotated[int, Field(ge=1)]


class SourceParent(StrictModel):
    """The frozen, sorted, complete parent of one source boundary."""

    schema_id: Literal["dpone.rest_source_parent.v1"] = Field(
        default=SOURCE_PARENT_SCHEMA_ID, alias="schema")
    artifact: ArtifactRef
    row_count: _Count
    columns: Annotated[tuple[ParentColumn, ...], Field(min_length=1)]
    sort_keys: Annotated[tuple[str, ...], Field(min_length=1)]
    scope_field: str
    boundary: ParentBoundary
    source: ParentSource
    mapping_digest: Digest
    scope_index: tuple[ScopeIndexEntry, ...]
    complete: Literal[True]

    @model_validator(mode="after")
    def _consistent(self) -> SourceParent:
        names = [column.name for column in self.columns]
        if len(set(names)) != len(names):
            raise ValueError("column names are not unique")
        if self.sort_keys[0] != self.scope_field:
            raise ValueError("the scope field must be the first sort key")
        if len(set(self.sort_keys)) != len(self.sort_keys) or not set(self.sort_keys) <= set(names):
            raise ValueError("sort keys must be distinct mapped columns")
        scope = next(column for column in self.columns if column.name == self.scope_field)
        if scope.type != "date" or scope.nullable:
            raise ValueError("the scope field must be a non-nullable date column")
        expected_key = PARENT_KEY_PREFIX + self.artifact.digest.removeprefix("sha256:") + ".arrow"
        if self.artifact.key != expected_key:
            raise ValueError(f"artifact key must be {expected_key!r}")
        self._check_scope_index()
        return self

    def _check_scope_index(self) -> None:
        next_row = 0
        previous: dt.date | None = None
        for entry in self.scope_index:
            if previous is not None and entry.date <= previous:
                raise ValueError("scope_index dates must be strictly increasing")
            if not self.boundary.from_date <= entry.date < self.boundary.to_date:
                raise ValueError(f"scope_index date {entry.date} is outside the boundary")
            if entry.first_row != next_row:
                raise ValueError("scope_index runs must be contiguous from row 0")
            next_row += entry.row_count
            previous = entry.date
        if next_row != self.row_count:
            raise ValueError("scope_index row counts do not add up to row_count")

    def canonical_bytes(self) -> bytes:
        """The parent document as canonical JSON (the bytes published next to the IPC file)."""
        return canonical_json(self.model_dump(mode="json", by_alias=True))
