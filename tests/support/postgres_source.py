"""A PostgreSQL-source workload for the delivery suites: the example rows loaded into a table of
the session's cluster, and a workload (beside the example ones in a bound registry) that reads
that table through a connection ref instead of the CSV file.

Import as ``support.postgres_source``: ``tests/`` is on ``sys.path``.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from support.source import EXAMPLE_CSV

WORKLOAD: Final = "measurements_pg"
CONNECTION_REF: Final = "warehouse.eu-1"
DSN_VARIABLE: Final = "DPONE_CONN_WAREHOUSE_EU_1_DSN"
DSN_FILE_VARIABLE: Final = "DPONE_CONN_WAREHOUSE_EU_1_DSN_FILE"
PASSWORD_SENTINEL: Final = "pg-sentinel-Xq81-never-printed"
_DDL: Final = """CREATE TABLE {} (
    business_date date, sensor_id varchar(16), site text, reading double precision,
    sample_count integer, note text, measured_at timestamptz, is_valid boolean)"""


@contextlib.contextmanager
def measurements_table(postgres_dsn: str) -> Iterator[str]:
    """A fresh table holding the example CSV's rows; its name, dropped afterwards."""
    name = f"measurements_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL(_DDL).format(sql.Identifier(name)))
        copy_in = sql.SQL("COPY {} FROM STDIN (FORMAT csv, HEADER true)").format(
            sql.Identifier(name))
        with conn.cursor() as cursor, cursor.copy(copy_in) as copy:
            copy.write(EXAMPLE_CSV.read_bytes())
    try:
        yield name
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(name)))


def source_dsn(postgres_dsn: str) -> str:
    """The cluster's DSN carrying the sentinel password (the test cluster trusts loopback, so
    the password is never checked: it is there to prove it never leaks)."""
    return make_conninfo(postgres_dsn, password=PASSWORD_SENTINEL)


def write_postgres_workload(registry: Path, table: str) -> Path:
    """``workloads/measurements_pg.yaml``: the sync example, reading ``public.<table>`` through
    the connection ref ``warehouse.eu-1``."""
    example = (registry / "workloads" / "measurements_sync.yaml").read_text("utf-8")
    head, _source, sink = example.partition(
        "source:\n  type: file\n  format: csv\n  path: ../data/measurements.csv\n")
    assert sink, "the sync example's source block changed"
    workload = registry / "workloads" / f"{WORKLOAD}.yaml"
    workload.write_text(
        head.replace("name: measurements_sync", f"name: {WORKLOAD}")
        + f"source:\n  type: postgres\n  connection_ref: {CONNECTION_REF}\n"
          f"  table: public.{table}\n" + sink, encoding="utf-8")
    return workload
