"""The payload mapping: closed list of output columns, their types and the sort order."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from dpone.contracts._base import StrictModel
from dpone.contracts.workload import ColumnName

MAPPING_SCHEMA_ID = "dpone.payload_mapping.v1"

ColumnType = Literal["string", "int64", "float64", "bool", "date", "timestamp"]


class MappedColumn(StrictModel):
    name: ColumnName
    source: ColumnName | None = None
    type: ColumnType
    nullable: bool = True

    @property
    def source_column(self) -> str:
        return self.source or self.name


class PayloadMapping(StrictModel):
    schema_id: Literal["dpone.payload_mapping.v1"] = Field(alias="schema")
    id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*\.v[1-9][0-9]*$")]
    description: Annotated[str, Field(max_length=2000)] | None = None
    columns: Annotated[tuple[MappedColumn, ...], Field(min_length=1, max_length=512)]
    sort_keys: Annotated[tuple[ColumnName, ...], Field(min_length=1, max_length=16)]

    @model_validator(mode="after")
    def _closed(self) -> PayloadMapping:
        names = [column.name for column in self.columns]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate column names: {', '.join(duplicates)}")
        unknown = [key for key in self.sort_keys if key not in names]
        if unknown:
            raise ValueError(f"sort keys are not mapped columns: {', '.join(unknown)}")
        return self

    def column(self, name: str) -> MappedColumn | None:
        return next((c for c in self.columns if c.name == name), None)
