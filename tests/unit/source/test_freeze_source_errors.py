"""Mapping failures are refused before anything is sealed, each naming the column."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpone.contracts import DponeError
from dpone.contracts.plan import ResolvedSource
from dpone.executor.source import freeze_source
from support.source import (
    EXAMPLE_CSV,
    WEEK,
    MemoryArtifactStore,
    example_plan,
    registry_with_csv,
)

HEADER = b"business_date,sensor_id,site,reading,sample_count,note,measured_at,is_valid\n"
GOOD = b'2026-08-02,"S-001","Kazan",1.5,10,"ok",2026-08-02T01:02:03.004Z,true\n'


def _freeze_csv(tmp_path: Path, data: bytes,
                plan_source: ResolvedSource | None = None) -> tuple[DponeError, MemoryArtifactStore]:
    root = registry_with_csv(tmp_path / "registry", data)
    store = MemoryArtifactStore()
    with pytest.raises(DponeError) as caught:
        freeze_source(example_plan(plan_source), registry_root=root, interval_start=WEEK[0],
                      interval_end=WEEK[1], artifacts=store)
    return caught.value, store


def _expect(error: DponeError, store: MemoryArtifactStore, code: str, column: str | None) -> None:
    assert error.code == code, error
    assert error.details.get("column") == column, error.details
    if column is not None:
        assert repr(column) in error.message
    assert store.objects == {}, "nothing may be published for a refused source"


def test_missing_column(tmp_path: Path) -> None:
    header = HEADER.replace(b",note,", b",remark,")
    error, store = _freeze_csv(tmp_path, header + GOOD)
    _expect(error, store, "source.column_missing", "note")


def test_text_in_an_int64_column(tmp_path: Path) -> None:
    bad = GOOD.replace(b",10,", b",ten,")
    error, store = _freeze_csv(tmp_path, HEADER + GOOD * 3 + bad)
    _expect(error, store, "source.type_mismatch", "sample_count")
    assert error.details["row"] == 4
    assert error.details["line"] == 5  # the header is line 1
    assert "(record 4, file line 5, value 'ten')" in error.message


def test_a_value_after_a_multi_line_field_names_its_record_and_its_file_line(
        tmp_path: Path) -> None:
    """Quoted fields may hold line breaks: record 3 starts on file line 6 here, not line 4."""
    spanning = GOOD.replace(b'"ok"', b'"first line\nsecond line\nthird line"')
    bad = GOOD.replace(b",10,", b",twelve-and-a-very-long-value-that-is-cut-when-shown,")
    error, store = _freeze_csv(tmp_path, HEADER + GOOD + spanning + bad)

    _expect(error, store, "source.type_mismatch", "sample_count")
    assert (error.details["row"], error.details["line"]) == (3, 6)
    assert "(record 3, file line 6, value 'twelve-and-a-very-long-value-that-is-cut...')" \
        in error.message


@pytest.mark.parametrize(("bad", "code", "column"), [
    (GOOD.replace(b",10,", b",1e3,"), "source.type_mismatch", "sample_count"),
    (GOOD.replace(b",1.5,", b',"1,5",'), "source.type_mismatch", "reading"),
    (GOOD.replace(b",true\n", b",yes\n"), "source.type_mismatch", "is_valid"),
    (GOOD.replace(b"2026-08-02T", b"2026-02-30T"), "source.type_mismatch", "measured_at"),
    (GOOD.replace(b'"ok"', b'"line\nbreak \xff"'), "source.invalid_utf8", "note"),
], ids=["int64", "float64", "bool", "timestamp", "utf8"])
def test_a_bad_value_names_its_record_past_the_first_block(tmp_path: Path, bad: bytes, code: str,
                                                           column: str) -> None:
    """The record number is the data row counted after the header, exact across blocks, with
    nulls and quoted separators before it."""
    body = EXAMPLE_CSV.read_bytes().split(b"\n", 1)[1]
    records = body.count(b"\n") * 40
    nullable = GOOD.replace(b'"ok"', b"").replace(b'"Kazan"', b'"Ka,z\n""an"')
    error, store = _freeze_csv(tmp_path, HEADER + body * 40 + nullable + bad + GOOD)
    _expect(error, store, code, column)
    assert error.details["row"] == records + 2, (error.details, records)
    # The quoted field of the row before it spans two lines: the file line is one further.
    assert error.details["line"] == records + 4, (error.details, records)
    assert f"(record {records + 2}, file line {records + 4}, value " in error.message


def test_timestamp_without_zone(tmp_path: Path) -> None:
    bad = GOOD.replace(b"03.004Z", b"03.004")
    error, store = _freeze_csv(tmp_path, HEADER + bad)
    _expect(error, store, "source.type_mismatch", "measured_at")


def test_type_mismatch_outside_the_boundary_still_fails(tmp_path: Path) -> None:
    bad = GOOD.replace(b"2026-08-02,", b"2026-09-02,").replace(b",1.5,", b",n/a,")
    error, store = _freeze_csv(tmp_path, HEADER + GOOD + bad)
    _expect(error, store, "source.type_mismatch", "reading")


def test_null_in_a_required_column_names_column_and_record(tmp_path: Path) -> None:
    bad = GOOD.replace(b'"S-001"', b"")
    error, store = _freeze_csv(tmp_path, HEADER + GOOD + GOOD + bad + GOOD)
    _expect(error, store, "source.null_in_required", "sensor_id")
    assert error.details["row"] == 3


def test_null_in_a_required_column_outside_the_boundary_is_not_read(tmp_path: Path) -> None:
    outside = GOOD.replace(b"2026-08-02,", b"2026-09-02,").replace(b'"S-001"', b"")
    root = registry_with_csv(tmp_path / "registry", HEADER + GOOD + outside)
    parent = freeze_source(example_plan(), registry_root=root, interval_start=WEEK[0],
                           interval_end=WEEK[1], artifacts=MemoryArtifactStore())
    assert parent.row_count == 1


def test_null_scope_date_fails_anywhere(tmp_path: Path) -> None:
    bad = b"," + GOOD.split(b",", 1)[1]
    error, store = _freeze_csv(tmp_path, HEADER + GOOD + bad)
    _expect(error, store, "source.null_in_required", "business_date")
    assert error.details["row"] == 2


def test_quoted_empty_string_in_an_int64_column_is_not_null(tmp_path: Path) -> None:
    bad = GOOD.replace(b",10,", b',"",')
    error, store = _freeze_csv(tmp_path, HEADER + bad)
    _expect(error, store, "source.type_mismatch", "sample_count")


def test_invalid_utf8_bytes(tmp_path: Path) -> None:
    bad = GOOD.replace(b'"ok"', b'"caf\xe9"')
    error, store = _freeze_csv(tmp_path, HEADER + GOOD + bad)
    _expect(error, store, "source.invalid_utf8", "note")


def test_invalid_utf8_in_a_large_file_is_found_past_the_first_block(tmp_path: Path) -> None:
    body = EXAMPLE_CSV.read_bytes().split(b"\n", 1)[1]
    bad = GOOD.replace(b'"Kazan"', b'"Kaz\xff\xfen"')
    error, store = _freeze_csv(tmp_path, HEADER + body * 20 + bad)
    _expect(error, store, "source.invalid_utf8", "site")


def test_malformed_record(tmp_path: Path) -> None:
    error, store = _freeze_csv(tmp_path, HEADER + GOOD + b'2026-08-02,"S-001"\n')
    _expect(error, store, "source.unreadable", None)
    assert "malformed" in error.message


def test_a_binary_file_as_csv_is_unreadable(tmp_path: Path) -> None:
    error, store = _freeze_csv(tmp_path, bytes(range(256)) * 8)
    _expect(error, store, "source.unreadable", None)
    assert "source.format" in error.fix_hint and "documented type" not in error.fix_hint


def test_only_the_refused_value_appears_in_error_text_and_never_in_details(
        tmp_path: Path) -> None:
    """The refused value is what a person needs to fix the file (cut to 40 characters); no
    other cell of the row appears, and the structured details carry positions only."""
    bad = GOOD.replace(b",10,", b",refused-value,").replace(b'"Kazan"', b'"other-cell"')
    error, _store = _freeze_csv(tmp_path, HEADER + bad)
    assert "value 'refused-value'" in error.message
    assert "other-cell" not in str(error) and "Kazan" not in str(error)
    assert "refused-value" not in repr(error.details)


def test_missing_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(DponeError) as caught:
        freeze_source(example_plan(), registry_root=tmp_path, interval_start=WEEK[0],
                      interval_end=WEEK[1], artifacts=MemoryArtifactStore())
    assert caught.value.code == "source.unavailable" and caught.value.exit_code == 3


def test_source_path_outside_the_registry_is_refused(tmp_path: Path) -> None:
    source = ResolvedSource(type="file", format="csv", registry_path="../outside.csv")
    (tmp_path / "outside.csv").write_bytes(HEADER + GOOD)
    (tmp_path / "registry").mkdir()
    with pytest.raises(DponeError) as caught:
        freeze_source(example_plan(source), registry_root=tmp_path / "registry",
                      interval_start=WEEK[0], interval_end=WEEK[1],
                      artifacts=MemoryArtifactStore())
    assert caught.value.code == "input.invalid_argument"


def test_postgres_source_without_a_connection_is_unavailable() -> None:
    source = ResolvedSource(type="postgres", connection_ref="warehouse", table="measurements")
    with pytest.raises(DponeError) as caught:
        freeze_source(example_plan(source), registry_root=Path("."), interval_start=WEEK[0],
                      interval_end=WEEK[1], artifacts=MemoryArtifactStore())
    assert caught.value.code == "source.unavailable"


def _parquet(tmp_path: Path, table: pa.Table) -> tuple[DponeError, MemoryArtifactStore]:
    (tmp_path / "data").mkdir(parents=True, exist_ok=True)
    pq.write_table(table, tmp_path / "data" / "m.parquet")
    source = ResolvedSource(type="file", format="parquet", registry_path="data/m.parquet")
    store = MemoryArtifactStore()
    with pytest.raises(DponeError) as caught:
        freeze_source(example_plan(source), registry_root=tmp_path, interval_start=WEEK[0],
                      interval_end=WEEK[1], artifacts=store)
    return caught.value, store


def _good_table(**replace: pa.Array) -> pa.Table:
    columns = {
        "business_date": pa.array([dt.date(2026, 8, 2)]),
        "sensor_id": pa.array(["S-001"]),
        "site": pa.array(["Kazan"]),
        "reading": pa.array([1.5]),
        "sample_count": pa.array([10]),
        "note": pa.array([None], pa.string()),
        "measured_at": pa.array([dt.datetime(2026, 8, 2, 1, 2, 3)], pa.timestamp("ms", "UTC")),
        "is_valid": pa.array([True]),
    }
    columns.update(replace)
    return pa.table(columns)


def test_parquet_missing_column(tmp_path: Path) -> None:
    error, store = _parquet(tmp_path, _good_table().drop_columns(["is_valid"]))
    _expect(error, store, "source.column_missing", "is_valid")


def test_parquet_timestamp_without_zone(tmp_path: Path) -> None:
    naive = pa.array([dt.datetime(2026, 8, 2, 1, 2, 3)], pa.timestamp("ms"))
    error, store = _parquet(tmp_path, _good_table(measured_at=naive))
    _expect(error, store, "source.type_mismatch", "measured_at")
    assert "without time zone" in error.message


def test_parquet_text_in_an_int64_column(tmp_path: Path) -> None:
    error, store = _parquet(tmp_path, _good_table(sample_count=pa.array(["10"])))
    _expect(error, store, "source.type_mismatch", "sample_count")


def test_parquet_sub_microsecond_timestamp_does_not_fit(tmp_path: Path) -> None:
    precise = pa.array([1_785_632_523_000_000_001], pa.timestamp("ns", "UTC"))
    error, store = _parquet(tmp_path, _good_table(measured_at=precise))
    _expect(error, store, "source.type_mismatch", "measured_at")


def test_parquet_invalid_utf8_in_binary_column(tmp_path: Path) -> None:
    error, store = _parquet(tmp_path, _good_table(site=pa.array([b"Kaz\xffn"], pa.binary())))
    _expect(error, store, "source.invalid_utf8", "site")


def test_parquet_null_in_required(tmp_path: Path) -> None:
    error, store = _parquet(tmp_path, _good_table(sample_count=pa.array([None], pa.int64())))
    _expect(error, store, "source.null_in_required", "sample_count")
    assert error.details["row"] == 1


def test_unreadable_parquet(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "m.parquet").write_bytes(b"not parquet at all")
    source = ResolvedSource(type="file", format="parquet", registry_path="data/m.parquet")
    with pytest.raises(DponeError) as caught:
        freeze_source(example_plan(source), registry_root=tmp_path, interval_start=WEEK[0],
                      interval_end=WEEK[1], artifacts=MemoryArtifactStore())
    assert caught.value.code == "source.unreadable"
    assert caught.value.message == "the file is not readable Parquet"
    assert "replace the file or correct source.format" in caught.value.fix_hint
