"""Zero-RPO admission: SUBMITTING commits only with remote_apply on a streaming sync standby.

Uses its own fsync'd primary + synchronous standby. The standby is stopped through the
cluster's standby server handle (``cluster.standby.stop``), which runs ``pg_ctl stop``.
"""

from __future__ import annotations

import time

import psycopg
import pytest

from dpone.contracts import DponeError
from dpone.journal._marker import marker_digest
from dpone.journal.postgres import PostgresJournal
from support.journal import ENVIRONMENT, admission, submit
from support.postgres_cluster import ThrowawayCluster

pytestmark = pytest.mark.slow


def _sync_standbys(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_replication "
                           "WHERE state = 'streaming' AND sync_state = 'sync'").fetchone()
    return int(row[0]) if row else 0


def test_submit_requires_a_streaming_synchronous_standby() -> None:
    with ThrowawayCluster(fsync=True, synchronous_standby=True) as cluster:
        journal = PostgresJournal(cluster.dsn, environment_id=ENVIRONMENT,
                                  require_durability=True)
        try:
            journal.migrate()
            parent = journal.admit_parent(admission([(0, 10), (10, 20)])).parent
            first, second = (c.operation_id for c in parent.children)
            submitted, _lease = submit(journal, first)
            assert submitted.state_name == "submitting"
            lease = journal.acquire_lease(second, "mutation", "worker-2", 300)
            plan = journal.plan_attempt(second, lease)
            revision = journal.get_child(second).revision
            assert cluster.standby is not None
            cluster.standby.stop("fast")
            deadline = time.monotonic() + 60
            while _sync_standbys(cluster.dsn) and time.monotonic() < deadline:
                time.sleep(0.1)
            with pytest.raises(DponeError) as excinfo:
                journal.enter_submitting(plan, marker_digest(plan.marker), lease, revision)
            assert excinfo.value.code == "journal.durability_unavailable"
            assert journal.get_child(second).state_name == "sealed"
            assert journal.list_attempts(second) == []
        finally:
            journal.close()
