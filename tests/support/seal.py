"""Sealing the examples, and reading sealed payloads back as Arrow tables."""

from __future__ import annotations

import datetime as dt
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json

from dpone.artifacts import LocalArtifactStore
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import PayloadDocument, SealedChild, SealedTopology
from dpone.contracts.source_parent import SourceParent
from dpone.executor.source import open_parent
from support.common import EXAMPLES
from support.example_seal import seal_example as seal_workload

EXAMPLE_NAMES = ("measurements_async", "measurements_sync")
INTERVAL = (dt.date(2026, 8, 1), dt.date(2026, 9, 1))


@dataclass(frozen=True)
class Sealed:
    plan: RestDeliveryPlan
    plan_digest: str
    parent: SourceParent
    topology: SealedTopology
    store: LocalArtifactStore

    def parent_table(self) -> pa.Table:
        return open_parent(self.store.root / self.parent.artifact.key).read_all()

    def document(self, child: SealedChild) -> PayloadDocument:
        return PayloadDocument.model_validate_json(self.store.get_bytes(child.document.key))

    def decoded(self, child: SealedChild) -> bytes:
        data = self.store.get_bytes(child.payload.key)
        return gzip.decompress(data) if child.payload.key.endswith(".gz") else data


def seal_example(name: str, root: Path) -> Sealed:
    sealed = seal_workload(EXAMPLES / "workloads" / f"{name}.yaml", EXAMPLES, root, INTERVAL)
    return Sealed(sealed.plan, sealed.plan_digest, sealed.parent, sealed.topology, sealed.store)


def read_payload(decoded: bytes, payload_format: str, schema: pa.Schema) -> pa.Table:
    """Decode a payload with pyarrow's own readers into ``schema`` (nullable, no metadata)."""
    if payload_format == "csv":
        options = pa_csv.ConvertOptions(column_types=schema, strings_can_be_null=True,
                                        quoted_strings_can_be_null=False, null_values=[""])
        return pa_csv.read_csv(io.BytesIO(decoded), convert_options=options).cast(schema)
    # pyarrow's JSON reader parses no dates: read dates and timestamps as text, then cast.
    textual = pa.schema([field.with_type(pa.string())
                         if pa.types.is_date(field.type) or pa.types.is_timestamp(field.type)
                         else field for field in schema])
    options = pa_json.ParseOptions(explicit_schema=textual)
    return pa_json.read_json(io.BytesIO(decoded), parse_options=options).cast(schema)


def comparable_schema(table: pa.Table) -> pa.Schema:
    return pa.schema([field.with_nullable(True) for field in table.schema]).remove_metadata()
