"""Seeded synthetic data and a scratch registry for ``benchmarks/seal.py``.

The dataset has a variable volume over :data:`DAYS` days (quiet weekends, a three-day spike
and one very heavy day) and the column mix of a typical measurements table: a date, short
strings, a float, an int, nullable Cyrillic text and a UTC timestamp (ms).
"""

from __future__ import annotations

import datetime as dt
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

FIRST_DAY = dt.date(2026, 1, 1)
DAYS = 120
SITES = ["Москва-Север", "Санкт-Петербург", "Новосибирск", "Kazan", "Екатеринбург", "Sochi",
         "Пермь", "Omsk"]
NOTES = ["калибровка", "ok", "проверено вручную", "sensor reset", "замена батареи",
         "перегрев, повтор", "нет связи"]
MAPPING_ID = "bench.readings.v1"
MAPPING = f"""schema: dpone.payload_mapping.v1
id: {MAPPING_ID}
columns:
  - {{name: business_date, type: date, nullable: false}}
  - {{name: sensor_id, type: string, nullable: false}}
  - {{name: site, type: string}}
  - {{name: reading, type: float64}}
  - {{name: sample_count, type: int64, nullable: false}}
  - {{name: note, type: string}}
  - {{name: measured_at, type: timestamp, nullable: false}}
sort_keys: [business_date, sensor_id, measured_at]
"""
WORKLOADS = {
    "csv_gzip": ("mock.dataset-jobs@1", "partition_replace", "bench_readings"),
    "ndjson": ("bench.batch-ndjson@1", "incremental_append", "bench_readings_batches"),
    "json_array": ("bench.batch-json-array@1", "incremental_append", "bench_readings_batches"),
}
"""Workload name -> (profile, mutation kind, resource). The two ``bench.*`` profiles are the
example sync NDJSON profile (``mock.batch-ndjson@1``), the second with a JSON-array body, both
with the batch size of :func:`write_registry` (the example's own limits by default)."""
_SYNC_LIMITS = """limits:
  max_rows: 2000
  planning_rows: 1500
  max_decoded_bytes: 2000000
  planning_decoded_bytes: 1500000
  max_wire_bytes: 2000000
  planning_wire_bytes: 1500000
"""


def day_counts(rows: int) -> list[int]:
    """Rows per day: weekday 1.0, weekend 0.35, days 40-42 x4, day 90 x4.5 (sums to ``rows``)."""
    weights = []
    for offset in range(DAYS):
        day = FIRST_DAY + dt.timedelta(days=offset)
        weight = 35 if day.weekday() >= 5 else 100
        if offset in (40, 41, 42):
            weight *= 4
        if offset == 90:
            weight = weight * 9 // 2
        weights.append(weight)
    total = sum(weights)
    counts = [rows * weight // total for weight in weights]
    counts[0] += rows - sum(counts)
    return counts


class _Random:
    """Vectorised seeded randomness from ``random.randbytes`` (no numpy needed)."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def uniform(self, n: int) -> pa.Array:
        """``n`` floats in [0, 1)."""
        raw = pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(self._rng.randbytes(4 * n))])
        return pc.divide(raw.cast(pa.float64()), float(1 << 32))

    def integers(self, n: int, high: int) -> pa.Array:
        """``n`` ints in [0, high)."""
        return pc.floor(pc.multiply(self.uniform(n), float(high))).cast(pa.int64())

    def nulls(self, values: pa.Array, share: float) -> pa.Array:
        mask = pc.less(self.uniform(len(values)), share)
        return pc.if_else(mask, pa.scalar(None, values.type), values)


def _choice(rng: _Random, n: int, names: list[str], null_share: float = 0.0) -> pa.Array:
    indices = rng.integers(n, len(names)).cast(pa.int32())
    if null_share:
        indices = rng.nulls(indices, null_share)
    return pa.DictionaryArray.from_arrays(indices, pa.array(names)).dictionary_decode()


def synthetic_table(rows: int, seed: int) -> pa.Table:
    rng = _Random(seed)
    counts = day_counts(rows)
    epoch_day = (FIRST_DAY - dt.date(1970, 1, 1)).days
    day_number = pa.array([epoch_day + index for index, count in enumerate(counts)
                           for _ in range(count)], type=pa.int64())
    dates = day_number.cast(pa.int32()).cast(pa.date32())
    sensor = _choice(rng, rows, [f"S-{index:03d}" for index in range(300)])
    site = _choice(rng, rows, SITES, 0.05)
    reading = rng.nulls(pc.round(pc.subtract(pc.multiply(rng.uniform(rows), 80.0), 20.0), 3),
                        0.02)
    sample_count = rng.integers(rows, 5000)
    note = _choice(rng, rows, NOTES, 0.6)
    millis = pc.add(pc.multiply(day_number, 86_400_000), rng.integers(rows, 86_400_000))
    measured_at = millis.cast(pa.timestamp("ms", tz="UTC"))
    return pa.table({"business_date": dates, "sensor_id": sensor, "site": site,
                     "reading": reading, "sample_count": sample_count, "note": note,
                     "measured_at": measured_at})


def _sync_profiles(registry: Path, batch_rows: int | None) -> None:
    """``bench.batch-ndjson@1`` and ``bench.batch-json-array@1`` (see :data:`WORKLOADS`)."""
    example = (registry / "profiles" / "mock.batch-ndjson@1.yaml").read_text(encoding="utf-8")
    if _SYNC_LIMITS not in example:
        raise RuntimeError("the example sync profile's limits changed: update _SYNC_LIMITS")
    if batch_rows is not None:  # batches of exactly batch_rows rows; bytes never the bound
        example = example.replace(_SYNC_LIMITS, f"""limits:
  max_rows: {batch_rows}
  planning_rows: {batch_rows}
  max_decoded_bytes: {batch_rows * 1000}
  planning_decoded_bytes: {batch_rows * 1000}
  max_wire_bytes: {batch_rows * 1000}
  planning_wire_bytes: {batch_rows * 1000}
""")
    ndjson = example.replace("id: mock.batch-ndjson", "id: bench.batch-ndjson")
    json_array = (example.replace("id: mock.batch-ndjson", "id: bench.batch-json-array")
                  .replace("format: ndjson", "format: json_array")
                  .replace("application/x-ndjson", "application/json"))
    for name, text in (("bench.batch-ndjson@1", ndjson), ("bench.batch-json-array@1", json_array)):
        (registry / "profiles" / f"{name}.yaml").write_text(text, encoding="utf-8")


def write_registry(examples: Path, root: Path, rows: int, seed: int,
                   batch_rows: int | None = None) -> Path:
    """A copy of the example registry plus the synthetic mapping, data and the workloads."""
    registry = root / "registry"
    shutil.copytree(examples, registry, ignore=shutil.ignore_patterns("data", "workloads"))
    (registry / "data").mkdir()
    (registry / "workloads").mkdir()
    (registry / "mappings" / f"{MAPPING_ID}.yaml").write_text(MAPPING, encoding="utf-8")
    _sync_profiles(registry, batch_rows)
    pq.write_table(synthetic_table(rows, seed), registry / "data" / "readings.parquet")
    for name, (profile, kind, resource) in WORKLOADS.items():
        (registry / "workloads" / f"{name}.yaml").write_text(f"""schema: dpone.batch.v1
name: bench_{name}
source: {{type: file, format: parquet, path: ../data/readings.parquet}}
sink:
  type: rest
  connection_ref: mock_measurements
  operation_profile_ref: {profile}
  resource: {resource}
  mutation:
    kind: {kind}
    generation_from: scheduled_interval
    scope: {{type: inclusive_date_window, source_field: business_date}}
  payload: {{mapping_ref: {MAPPING_ID}}}
""", encoding="utf-8")
    return registry


def interval() -> tuple[dt.date, dt.date]:
    return FIRST_DAY, FIRST_DAY + dt.timedelta(days=DAYS)
