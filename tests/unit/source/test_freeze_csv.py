"""Freezing the example CSV: content, order, nulls vs empty strings, Unicode, UTC, the index."""

from __future__ import annotations

import csv
import datetime as dt
import json
import random
from pathlib import Path

import pyarrow as pa
import pytest

from dpone.contracts import DponeError, canonical_json, content_digest
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.source_parent import SourceParent
from dpone.executor.source import (
    PARENT_BATCH_ROWS,
    freeze_source,
    open_parent,
    parent_document_key,
)
from support.common import EXAMPLES
from support.source import (
    EXAMPLE_CSV,
    WEEK,
    MemoryArtifactStore,
    example_plan,
    expected_rows,
    normalize,
    registry_with_csv,
)


def _freeze(store: ImmutableArtifactPort, root: Path = EXAMPLES,
            window: tuple[dt.date, dt.date] = WEEK) -> SourceParent:
    return freeze_source(example_plan(), registry_root=root, interval_start=window[0],
                         interval_end=window[1], artifacts=store)


def _table(store: ImmutableArtifactPort, parent: SourceParent) -> pa.Table:
    return open_parent(store.get_bytes(parent.artifact.key)).read_all()


def test_row_count_matches_an_independent_count() -> None:
    with EXAMPLE_CSV.open(newline="", encoding="utf-8") as handle:
        count = sum(1 for row in csv.DictReader(handle)
                    if "2026-08-01" <= row["business_date"] < "2026-08-08")
    parent = _freeze(MemoryArtifactStore())
    assert parent.row_count == count == 630


def test_parent_equals_the_hand_parsed_sorted_rows(store: ImmutableArtifactPort) -> None:
    parent = _freeze(store)
    table = _table(store, parent)
    assert table.num_rows == parent.row_count
    assert normalize(table.to_pylist()) == expected_rows(EXAMPLE_CSV, *WEEK)


def test_nulls_and_empty_strings_stay_distinct(store: ImmutableArtifactPort) -> None:
    rows = _table(store, _freeze(store)).to_pylist()
    key = {(r["business_date"], r["sensor_id"], r["measured_at"]): r for r in rows}
    # 2026-08-01,"S-002",,39.511,4554,,2026-08-01T10:48:05.661Z,true  (site and note null)
    # 2026-08-01,"S-002","",54.173,4892,"",2026-08-01T14:24:39.104Z,true  (both empty strings)
    null_row = key[(dt.date(2026, 8, 1), "S-002",
                    dt.datetime(2026, 8, 1, 10, 48, 5, 661000, tzinfo=dt.UTC))]
    empty_row = key[(dt.date(2026, 8, 1), "S-002",
                     dt.datetime(2026, 8, 1, 14, 24, 39, 104000, tzinfo=dt.UTC))]
    assert null_row["site"] is None and null_row["note"] is None
    assert empty_row["site"] == "" and empty_row["note"] == ""
    assert sum(r["site"] is None for r in rows) > 0 and sum(r["site"] == "" for r in rows) > 0


def test_cyrillic_and_utc_timestamps(store: ImmutableArtifactPort) -> None:
    table = _table(store, _freeze(store))
    assert table.schema.field("measured_at").type == pa.timestamp("us", tz="UTC")
    sites = set(table.column("site").to_pylist())
    assert {"Москва-Север", "Санкт-Петербург", "Екатеринбург", "Новосибирск"} <= sites
    first = table.slice(0, 1).to_pylist()[0]
    assert first["measured_at"].utcoffset() == dt.timedelta(0)


def test_schema_batches_and_metadata(store: ImmutableArtifactPort) -> None:
    parent = _freeze(store)
    reader = open_parent(store.get_bytes(parent.artifact.key))
    schema = reader.schema
    assert schema.names == [c.name for c in example_plan().mapping.columns]
    assert [f.nullable for f in schema] == [c.nullable for c in example_plan().mapping.columns]
    assert schema.field("site").type == pa.large_string()
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    assert meta["dpone.schema"] == "dpone.rest_source_parent.v1"
    assert json.loads(meta["dpone.sort_keys"]) == ["business_date", "sensor_id", "measured_at"]
    assert json.loads(meta["dpone.boundary"]) == {"from_date": "2026-08-01",
                                                  "to_date": "2026-08-08", "time_zone": "UTC"}
    assert all(reader.get_batch(i).num_rows <= PARENT_BATCH_ROWS
               for i in range(reader.num_record_batches))


def test_parent_document_is_published_and_consistent(store: ImmutableArtifactPort) -> None:
    parent = _freeze(store)
    assert parent.artifact.key == f"parents/sha256/{parent.artifact.digest[7:]}.arrow"
    data = store.get_bytes(parent.artifact.key)
    assert content_digest(data) == parent.artifact.digest and len(data) == parent.artifact.size
    document = store.get_bytes(parent_document_key(parent))
    assert document == canonical_json(json.loads(document))
    assert SourceParent.model_validate_json(document) == parent
    assert parent.source.type == "file" and parent.source.format == "csv"
    assert parent.source.version == content_digest(EXAMPLE_CSV.read_bytes())
    assert parent.sort_keys == ("business_date", "sensor_id", "measured_at")
    assert parent.mapping_digest == example_plan().mapping_digest
    assert parent.complete is True


def test_scope_index_locates_every_date(store: ImmutableArtifactPort) -> None:
    parent = _freeze(store)
    dates = _table(store, parent).column("business_date").to_pylist()
    assert [e.date for e in parent.scope_index] == [dt.date(2026, 8, d) for d in range(1, 8)]
    for entry in parent.scope_index:
        run = dates[entry.first_row:entry.first_row + entry.row_count]
        assert set(run) == {entry.date}
    assert sum(e.row_count for e in parent.scope_index) == parent.row_count


@pytest.mark.parametrize("window", [(dt.date(2026, 9, 1), dt.date(2026, 9, 8)),
                                    (dt.date(2026, 8, 3), dt.date(2026, 8, 3))])
def test_empty_boundary_is_a_complete_empty_parent(store: ImmutableArtifactPort,
                                                   window: tuple[dt.date, dt.date]) -> None:
    parent = _freeze(store, window=window)
    assert parent.row_count == 0 and parent.scope_index == () and parent.complete is True
    reader = open_parent(store.get_bytes(parent.artifact.key))
    assert reader.num_record_batches == 0
    assert reader.schema.names[0] == "business_date"


def test_a_day_without_rows_is_left_out_of_the_index(tmp_path: Path,
                                                     store: ImmutableArtifactPort) -> None:
    lines = EXAMPLE_CSV.read_bytes().splitlines(keepends=True)
    kept = [lines[0], *(line for line in lines[1:] if not line.startswith(b"2026-08-03"))]
    root = registry_with_csv(tmp_path / "registry", b"".join(kept))
    parent = _freeze(store, root)
    assert dt.date(2026, 8, 3) not in {e.date for e in parent.scope_index}
    assert len(parent.scope_index) == 6


def test_row_order_in_the_source_does_not_change_the_parent(tmp_path: Path) -> None:
    lines = EXAMPLE_CSV.read_bytes().splitlines(keepends=True)
    body = lines[1:]
    random.Random(7).shuffle(body)
    root = registry_with_csv(tmp_path / "registry", b"".join([lines[0], *body]))
    shuffled = _freeze(MemoryArtifactStore(), root)
    original = _freeze(MemoryArtifactStore())
    assert shuffled.artifact == original.artifact
    assert shuffled.source.version != original.source.version


def test_same_inputs_give_the_same_parent_in_one_process() -> None:
    first, second = MemoryArtifactStore(), MemoryArtifactStore()
    assert _freeze(first) == _freeze(second)
    assert first.objects == second.objects


def test_interval_end_before_start_is_refused(store: ImmutableArtifactPort) -> None:
    with pytest.raises(DponeError) as caught:
        _freeze(store, window=(dt.date(2026, 8, 8), dt.date(2026, 8, 1)))
    assert caught.value.code == "input.invalid_argument"


def test_zone_offsets_become_utc_instants(tmp_path: Path, store: ImmutableArtifactPort) -> None:
    header = EXAMPLE_CSV.read_bytes().split(b"\n", 1)[0] + b"\n"
    row = b'2026-08-02,"S-001","Kazan",1.5,10,"ok",2026-08-02T03:00:00.250+03:00,true\n'
    parent = _freeze(store, registry_with_csv(tmp_path / "registry", header + row))
    (value,) = _table(store, parent).column("measured_at").to_pylist()
    assert value == dt.datetime(2026, 8, 2, 0, 0, 0, 250000, tzinfo=dt.UTC)


def test_open_parent_maps_a_file_and_reads_bytes_alike(tmp_path: Path,
                                                       store: ImmutableArtifactPort) -> None:
    parent = _freeze(store)
    data = store.get_bytes(parent.artifact.key)
    path = tmp_path / "parent.arrow"
    path.write_bytes(data)
    mapped = open_parent(path)
    assert mapped.read_all().equals(open_parent(data).read_all())
    assert mapped.read_all().num_rows == parent.row_count
