"""`dpone deliver` of a workload whose source is a PostgreSQL table, on both journals: the source
is read through its connection ref's ``DPONE_CONN_<REF>_DSN`` and delivered once per key, the
receiver applying exactly the rows sealed; without the variable the run exits 3 with
``credential.unavailable`` naming it, before anything is admitted or sent, and the DSN's
password is printed nowhere."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import FULL, Dpone, posts
from support.postgres_source import (
    DSN_FILE_VARIABLE,
    DSN_VARIABLE,
    PASSWORD_SENTINEL,
    WORKLOAD,
    measurements_table,
    source_dsn,
    write_postgres_workload,
)
from support.source import EXAMPLE_CSV, expected_rows


@pytest.fixture(scope="module")
def table(postgres_dsn: str) -> Iterator[str]:
    with measurements_table(postgres_dsn) as name:
        yield name


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str, table: str,
          monkeypatch: pytest.MonkeyPatch) -> Dpone:
    write_postgres_workload(registry, table)
    monkeypatch.delenv(DSN_VARIABLE, raising=False)
    monkeypatch.delenv(DSN_FILE_VARIABLE, raising=False)
    return Dpone(registry, tmp_path / "state", journal=journal_url)


def test_deliver_reads_a_postgres_source_through_its_connection_ref(
        dpone: Dpone, receiver: ReceiverThread, postgres_dsn: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DSN_VARIABLE, source_dsn(postgres_dsn))

    run = dpone.deliver(WORKLOAD, FULL, "--format", "json")

    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["status"] == "completed", document
    mutations = receiver.state.ledger.mutations
    assert len(mutations) == document["children_total"] == posts(receiver)
    assert set(Counter(m.key for m in mutations).values()) == {1}
    interval = tuple(dt.date.fromisoformat(day) for day in FULL)
    assert sum(m.rows for m in mutations) == document["rows_total"] == len(
        expected_rows(EXAMPLE_CSV, *interval))
    assert PASSWORD_SENTINEL not in run.out + run.err


def test_deliver_without_the_connection_variable_exits_3_before_anything_is_sent(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    run = dpone.deliver(WORKLOAD, FULL, "--format", "json")

    assert run.code == 3, run.out + run.err
    document = run.json()
    assert document["schema"] == "dpone.error.v1"
    assert document["code"] == "credential.unavailable"
    assert DSN_VARIABLE in str(document["message"]) and DSN_FILE_VARIABLE in str(document["hint"])
    assert "Traceback" not in run.out + run.err
    assert posts(receiver) == 0
