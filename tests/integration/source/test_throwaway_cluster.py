"""The throwaway cluster helper: the session cluster, and a synchronous primary+standby pair."""

from __future__ import annotations

import os
import time

import psycopg
import pytest

from support.postgres_cluster import STANDBY_NAME, ThrowawayCluster


def test_session_cluster_is_utf8_and_reachable(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        row = conn.execute("SELECT current_setting('server_encoding'), "
                           "current_setting('server_version_num')::int").fetchone()
    assert row is not None
    assert row[0] == "UTF8" and row[1] >= 150000


@pytest.mark.skipif(bool(os.environ.get("DPONE_TEST_POSTGRES_DSN")),
                    reason="an external server was given; no local binaries are assumed")
def test_fsync_on_and_synchronous_standby_pair() -> None:
    with ThrowawayCluster(fsync=True, synchronous_standby=True) as cluster:
        root = cluster.root
        with psycopg.connect(cluster.dsn, autocommit=True) as primary:
            assert primary.execute("SHOW fsync").fetchone() == ("on",)
            primary.execute("CREATE TABLE marker (x int)")
            primary.execute("INSERT INTO marker VALUES (7)")
            sync = primary.execute("SELECT application_name, sync_state FROM "
                                   "pg_stat_replication").fetchall()
            assert sync == [(STANDBY_NAME, "sync")]
            flushed = primary.execute("SELECT pg_current_wal_flush_lsn()").fetchone()
        with psycopg.connect(cluster.standby_dsn, autocommit=True) as standby:
            assert standby.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
            # synchronous_commit=on waits for the standby's flush; replay follows shortly.
            for _ in range(100):
                replayed = standby.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn",
                                           [flushed[0] if flushed else "0/0"]).fetchone()
                if replayed == (True,):
                    break
                time.sleep(0.05)
            assert standby.execute("SELECT x FROM marker").fetchall() == [(7,)]
    assert not root.exists()
