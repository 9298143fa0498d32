"""CSV, Parquet and PostgreSQL holding the same rows freeze to the same parent bytes."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

import psycopg
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from psycopg import sql

from dpone.contracts import DponeError
from dpone.contracts.plan import ResolvedSource
from dpone.contracts.ports import ArtifactRef, ImmutableArtifactPort
from dpone.contracts.source_parent import PostgresSnapshotVersion, SourceParent
from dpone.executor.source import freeze_source, open_parent
from support.source import (
    EXAMPLE_CSV,
    WEEK,
    MemoryArtifactStore,
    example_plan,
    expected_rows,
    normalize,
)

APPLICATION = "dpone-source-freeze"
DDL = """CREATE TABLE {} (
    business_date date, sensor_id varchar(16), site text, reading double precision,
    sample_count integer, note text, measured_at timestamptz, is_valid boolean)"""


def _freeze(source: ResolvedSource, store: ImmutableArtifactPort, *, root: Path = Path("."),
            dsn: str | None = None, window: tuple[dt.date, dt.date] = WEEK) -> SourceParent:
    return freeze_source(example_plan(source), registry_root=root, interval_start=window[0],
                         interval_end=window[1], artifacts=store, postgres_dsn=dsn)


@pytest.fixture(scope="module")
def csv_parent() -> SourceParent:
    return freeze_source(example_plan(), registry_root=EXAMPLE_CSV.parent.parent,
                         interval_start=WEEK[0], interval_end=WEEK[1],
                         artifacts=MemoryArtifactStore())


@pytest.fixture(scope="module")
def table_name(postgres_dsn: str) -> Iterator[str]:
    """The example rows loaded with COPY into a table of the session's cluster."""
    name = f"measurements_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL(DDL).format(sql.Identifier(name)))
        copy_in = sql.SQL("COPY {} FROM STDIN (FORMAT csv, HEADER true)").format(
            sql.Identifier(name))
        with conn.cursor() as cursor, cursor.copy(copy_in) as copy:
            copy.write(EXAMPLE_CSV.read_bytes())
    yield name
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(name)))


def _our_backends(dsn: str) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute("SELECT pid, state, xact_start FROM pg_stat_activity "
                            "WHERE application_name = %s", [APPLICATION]).fetchall()


def _assert_snapshot_closed(dsn: str) -> None:
    deadline = time.monotonic() + 10
    while _our_backends(dsn) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _our_backends(dsn) == []


def test_csv_parent_matches_the_oracle(csv_parent: SourceParent) -> None:
    assert csv_parent.row_count == len(expected_rows(EXAMPLE_CSV, *WEEK))


def test_parquet_copy_freezes_to_the_same_parent(tmp_path: Path, csv_parent: SourceParent,
                                                 store: ImmutableArtifactPort) -> None:
    table = pa_csv.read_csv(
        EXAMPLE_CSV,
        convert_options=pa_csv.ConvertOptions(
            column_types={"measured_at": pa.timestamp("ms", "UTC"), "sample_count": pa.int32()},
            strings_can_be_null=True, quoted_strings_can_be_null=False, null_values=[""]))
    # Other column order, an unmapped column, narrower types, small row groups.
    table = table.select(list(reversed(table.column_names))).append_column(
        "unmapped", pa.array(range(table.num_rows)))
    (tmp_path / "data").mkdir()
    pq.write_table(table, tmp_path / "data" / "measurements.parquet", row_group_size=300)
    source = ResolvedSource(type="file", format="parquet", registry_path="data/measurements.parquet")
    parent = _freeze(source, store, root=tmp_path)
    assert parent.artifact == csv_parent.artifact
    assert parent.scope_index == csv_parent.scope_index
    assert parent.source.format == "parquet" and parent.source.version != csv_parent.source.version
    rows = open_parent(store.get_bytes(parent.artifact.key)).read_all().to_pylist()
    assert normalize(rows) == expected_rows(EXAMPLE_CSV, *WEEK)


class _SnapshotWitness(MemoryArtifactStore):
    """Records whether our PostgreSQL transaction was still open when the parent was stored."""

    def __init__(self, dsn: str) -> None:
        super().__init__()
        self.dsn = dsn
        self.open_during_put: list[bool] = []

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        backends = _our_backends(self.dsn)
        self.open_during_put.append(any(xact is not None for _pid, _state, xact in backends))
        return super().put_stream(key, chunks)


@pytest.mark.parametrize("how", ["table", "query"])
def test_postgres_freezes_to_the_same_parent(how: str, postgres_dsn: str, table_name: str,
                                             csv_parent: SourceParent) -> None:
    source = (ResolvedSource(type="postgres", connection_ref="warehouse", table=table_name)
              if how == "table" else
              ResolvedSource(type="postgres", connection_ref="warehouse",
                             query=f"SELECT * FROM {table_name} WHERE sample_count >= 0"))
    store = _SnapshotWitness(postgres_dsn)
    parent = _freeze(source, store, dsn=postgres_dsn)
    assert parent.artifact == csv_parent.artifact
    assert parent.scope_index == csv_parent.scope_index
    version = parent.source.version
    assert isinstance(version, PostgresSnapshotVersion)
    assert version.server_version.startswith("15") and version.snapshot.count(":") == 2
    assert store.open_during_put == [True], "the snapshot must stay open until the parent is durable"
    _assert_snapshot_closed(postgres_dsn)


def test_postgres_table_in_a_schema_and_an_empty_boundary(postgres_dsn: str,
                                                          table_name: str) -> None:
    source = ResolvedSource(type="postgres", connection_ref="warehouse",
                            table=f"public.{table_name}")
    parent = _freeze(source, MemoryArtifactStore(), dsn=postgres_dsn,
                     window=(dt.date(2027, 1, 1), dt.date(2027, 1, 8)))
    assert parent.row_count == 0 and parent.scope_index == () and parent.complete
    _assert_snapshot_closed(postgres_dsn)


def _query_error(dsn: str, query: str) -> DponeError:
    source = ResolvedSource(type="postgres", connection_ref="warehouse", query=query)
    store = MemoryArtifactStore()
    with pytest.raises(DponeError) as caught:
        _freeze(source, store, dsn=dsn)
    assert store.objects == {}
    _assert_snapshot_closed(dsn)
    return caught.value


def test_postgres_missing_column(postgres_dsn: str, table_name: str) -> None:
    error = _query_error(postgres_dsn, f"SELECT business_date, sensor_id, site, reading, "
                                       f"sample_count, measured_at, is_valid FROM {table_name}")
    assert (error.code, error.details["column"]) == ("source.column_missing", "note")


def test_postgres_timestamp_without_zone(postgres_dsn: str, table_name: str) -> None:
    error = _query_error(postgres_dsn, f"SELECT business_date, sensor_id, site, reading, "
                                       f"sample_count, note, measured_at::timestamp AS measured_at,"
                                       f" is_valid FROM {table_name}")
    assert (error.code, error.details.get("column")) == ("source.type_mismatch", "measured_at"), error
    assert "without time zone" in error.message


def test_postgres_text_in_an_int64_column(postgres_dsn: str, table_name: str) -> None:
    error = _query_error(postgres_dsn, f"SELECT business_date, sensor_id, site, reading, "
                                       f"sample_count::text AS sample_count, note, measured_at, "
                                       f"is_valid FROM {table_name}")
    assert (error.code, error.details["column"]) == ("source.type_mismatch", "sample_count")


def test_postgres_null_in_required(postgres_dsn: str, table_name: str) -> None:
    error = _query_error(postgres_dsn, f"SELECT business_date, sensor_id, site, reading, "
                                       f"CASE WHEN sample_count % 7 = 3 THEN NULL ELSE sample_count"
                                       f" END AS sample_count, note, measured_at, is_valid "
                                       f"FROM {table_name}")
    assert (error.code, error.details["column"]) == ("source.null_in_required", "sample_count")
    assert error.details["row"] >= 1


def test_postgres_value_that_cannot_convert_is_named(postgres_dsn: str, table_name: str) -> None:
    error = _query_error(postgres_dsn, f"SELECT business_date, sensor_id, site, reading, "
                                       f"sample_count, note, CASE WHEN sensor_id = 'S-011' THEN "
                                       f"'infinity'::timestamptz ELSE measured_at END AS "
                                       f"measured_at, is_valid FROM {table_name}")
    assert (error.code, error.details.get("column")) == ("source.type_mismatch", "measured_at"), error


def test_postgres_query_that_fails_on_a_column_or_as_a_whole(postgres_dsn: str,
                                                            table_name: str) -> None:
    error = _query_error(postgres_dsn, f"SELECT business_date, sensor_id, site, "
                                       f"reading / (sample_count - sample_count) AS reading, "
                                       f"sample_count, note, measured_at, is_valid "
                                       f"FROM {table_name}")
    assert (error.code, error.details.get("column")) == ("source.type_mismatch", "reading"), error
    error = _query_error(postgres_dsn, f"SELECT * FROM {table_name} "
                                       f"WHERE sample_count / (sample_count - sample_count) > 0")
    assert (error.code, error.details.get("column")) == ("source.type_mismatch", None), error
    assert "22012" in error.message


def test_postgres_unknown_relation_and_unreachable_server(postgres_dsn: str) -> None:
    error = _query_error(postgres_dsn, "SELECT * FROM no_such_table")
    assert error.code == "source.unavailable" and error.details["sqlstate"] == "42P01"
    source = ResolvedSource(type="postgres", connection_ref="warehouse", table="t")
    with pytest.raises(DponeError) as caught:
        _freeze(source, MemoryArtifactStore(),
                dsn="postgresql://postgres:hunter2@127.0.0.1:1/postgres?connect_timeout=2")
    assert caught.value.code == "source.unavailable" and caught.value.exit_code == 3
    assert "hunter2" not in str(caught.value) and "hunter2" not in repr(caught.value.details)
