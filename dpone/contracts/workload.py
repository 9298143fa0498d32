"""The author's workload (`dpone.batch.v1`) with a REST sink."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from dpone.contracts._base import Name, StrictModel

WORKLOAD_SCHEMA_ID = "dpone.batch.v1"

ProfileRef = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*@[1-9][0-9]{0,5}$")]
MappingRef = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*\.v[1-9][0-9]*$")]
ColumnName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")]


class FileSource(StrictModel):
    """A Parquet or CSV file, resolved relative to the workload file."""

    type: Literal["file"]
    format: Literal["csv", "parquet"]
    path: Annotated[str, Field(min_length=1, max_length=1024)]


class PostgresSource(StrictModel):
    """A PostgreSQL table or read-only query, read in one REPEATABLE READ snapshot."""

    type: Literal["postgres"]
    connection_ref: Name
    table: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")] | None = None
    query: Annotated[str, Field(min_length=1, max_length=65536)] | None = None

    @model_validator(mode="after")
    def _one_of_table_or_query(self) -> PostgresSource:
        if (self.table is None) == (self.query is None):
            raise ValueError("give exactly one of 'table' or 'query'")
        return self


Source = Annotated[FileSource | PostgresSource, Field(discriminator="type")]


class MutationScope(StrictModel):
    type: Literal["inclusive_date_window", "half_open_date_window"]
    source_field: ColumnName


class Mutation(StrictModel):
    kind: Literal["partition_replace", "incremental_append"]
    generation_from: Literal["scheduled_interval"]
    correction_revision: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    scope: MutationScope


class SinkPayload(StrictModel):
    mapping_ref: MappingRef


class DeliveryOverrides(StrictModel):
    """The closed set of author-tunable planning preferences, range-checked against the profile."""

    preferred_window_days: Annotated[int, Field(ge=1, le=366)] | None = None


class RestSink(StrictModel):
    type: Literal["rest"]
    connection_ref: Name
    operation_profile_ref: ProfileRef
    resource: Name
    mutation: Mutation
    payload: SinkPayload
    delivery_overrides: DeliveryOverrides = DeliveryOverrides()


class Workload(StrictModel):
    schema_id: Literal["dpone.batch.v1"] = Field(alias="schema")
    name: Name
    description: Annotated[str, Field(max_length=2000)] | None = None
    source: Source
    sink: RestSink
