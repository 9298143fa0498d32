"""Helpers shared by the source-freeze suites (unit and integration).

Import as ``support.source``: ``tests/`` is on ``sys.path``.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.plan import ResolvedSource, RestDeliveryPlan
from dpone.contracts.ports import ArtifactRef, ImmutableArtifactPort
from support.common import EXAMPLES

try:  # written alongside this suite; the fake below stands in until it exists
    from dpone.artifacts import LocalArtifactStore
except ImportError:  # pragma: no cover
    LocalArtifactStore = None

EXAMPLE_CSV = EXAMPLES / "data" / "measurements.csv"
WEEK = (dt.date(2026, 8, 1), dt.date(2026, 8, 8))
COLUMNS = ["business_date", "sensor_id", "site", "reading", "sample_count", "note",
           "measured_at", "is_valid"]
# The parent's total order: scope field, the mapping's sort keys, then the other columns.
ORDER = ["business_date", "sensor_id", "measured_at", "site", "reading", "sample_count", "note",
         "is_valid"]


class MemoryArtifactStore:
    """A dict-of-bytes ImmutableArtifactPort: create-if-absent, conflict on other bytes."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef:
        existing = self.objects.get(key)
        if existing is not None and existing != data:
            raise DponeError(code="artifact.conflict", message=f"{key} holds other bytes")
        self.objects[key] = bytes(data)
        return ArtifactRef(key=key, digest="sha256:" + hashlib.sha256(data).hexdigest(),
                           size=len(data))

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        return self.put_bytes(key, b"".join(chunks))

    def get_bytes(self, key: str) -> bytes:
        try:
            return self.objects[key]
        except KeyError:
            raise DponeError(code="artifact.not_found", message=key) from None

    def open_stream(self, key: str, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        data = self.get_bytes(key)
        for start in range(0, len(data), chunk_size):
            yield data[start:start + chunk_size]

    def stat(self, key: str) -> ArtifactRef | None:
        data = self.objects.get(key)
        if data is None:
            return None
        return ArtifactRef(key=key, digest="sha256:" + hashlib.sha256(data).hexdigest(),
                           size=len(data))


def artifact_store(root: Path) -> ImmutableArtifactPort:
    """The product's local directory store when it is importable, else the in-memory fake."""
    if LocalArtifactStore is None:
        return MemoryArtifactStore()
    store: ImmutableArtifactPort = LocalArtifactStore(root)
    return store


@functools.cache
def _compiled_example() -> RestDeliveryPlan:
    return compile_workload(EXAMPLES / "workloads" / "measurements_sync.yaml", EXAMPLES).plan


def example_plan(source: ResolvedSource | None = None) -> RestDeliveryPlan:
    """The compiled sync example plan (CSV source), optionally with another source."""
    plan = _compiled_example()
    return plan if source is None else plan.model_copy(update={"source": source})


def registry_with_csv(root: Path, text: bytes | None = None) -> Path:
    """A registry root holding ``data/measurements.csv`` (the example, or the given bytes)."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    target = root / "data" / "measurements.csv"
    if text is None:
        shutil.copyfile(EXAMPLE_CSV, target)
    else:
        target.write_bytes(text)
    return root


def _value(column: str, field: str) -> Any:
    """One raw field of the example CSV dialect as the parent must hold it."""
    if field == "":
        return None
    if field.startswith('"'):
        return field[1:-1].replace('""', '"')
    if column == "business_date":
        return dt.date.fromisoformat(field)
    if column == "reading":
        return float(field)
    if column == "sample_count":
        return int(field)
    if column == "measured_at":
        return dt.datetime.fromisoformat(field.replace("Z", "+00:00")).astimezone(dt.UTC)
    if column == "is_valid":
        return {"true": True, "false": False}[field]
    raise AssertionError(f"unquoted text in {column}: {field!r}")


def expected_rows(path: Path, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    """An independent oracle: parse the example dialect by hand, filter, sort in Python.

    The example has no commas or newlines inside values, so a line splits on commas; a quoted
    field is a string (possibly empty) and an empty unquoted field is null.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].split(",") == COLUMNS
    rows = []
    for line in lines[1:]:
        fields = line.split(",")
        assert len(fields) == len(COLUMNS), line
        row = {c: _value(c, f) for c, f in zip(COLUMNS, fields, strict=True)}
        if start <= row["business_date"] < end:
            rows.append(row)
    rows.sort(key=lambda r: tuple((r[c] is None, r[c] if r[c] is not None else 0)
                                  for c in ORDER))
    return rows


def normalize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Arrow's UTC datetimes carry ZoneInfo('UTC'); compare instants, not tzinfo objects."""
    return [{k: (v.astimezone(dt.UTC) if isinstance(v, dt.datetime) else v)
             for k, v in row.items()} for row in rows]
