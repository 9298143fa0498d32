"""Payload retention over loopback, on both journals: `dpone admin prune` enforces the
profile's ``retention.payload_days`` by the journal clock.

A delivery admitted more than ``payload_days`` ago whose every child is settled loses its sealed
payloads (bytes and ``dpone.rest_payload.v1`` documents); a young delivery, one with an UNKNOWN
child, and a key another delivery still needs keep theirs. The preview changes nothing; the
apply writes one ``operator_prune`` audit row per delivery, `inspect` shows the expiry, and
`resume` / `reconcile` refuse with ``retention.payloads_expired`` instead of a missing artifact.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dpone.receiver import ReceiverThread
from support.cli import Dpone, Run
from support.reconcile import DROP_SYNC, reconcile

SYNC = "measurements_sync"
WEEK_1 = ("2026-08-01", "2026-08-08")  # the sync example seals one child per week
WEEK_2 = ("2026-08-08", "2026-08-15")
PAYLOAD_DAYS = 30  # examples/profiles/mock.batch-ndjson@1.yaml retention.payload_days


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal_url)


def _prune(dpone: Dpone, *extra: str) -> Run:
    return dpone("admin", "prune", "--journal", dpone.journal_url,
                 "--artifacts", str(dpone.state / "artifacts"), *extra)


def _delivered(run: Run) -> dict[str, Any]:
    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["status"] == "completed", document
    return document


def _sql(dpone: Dpone, statement: str, *params: object) -> list[tuple[Any, ...]]:
    """One statement on the test's journal (PostgreSQL ``%s`` placeholders; ``?`` on SQLite)."""
    url = dpone.journal_url
    if url.startswith("postgresql://"):
        with psycopg.connect(url, autocommit=True) as connection:
            cursor = connection.execute(statement.replace("?", "%s"), params)
            return list(cursor.fetchall()) if cursor.description else []
    with sqlite3.connect(url) as connection:
        return list(connection.execute(statement, params).fetchall())


def _age(dpone: Dpone, parent_id: str, days: int) -> None:
    """Move the delivery's admission ``days`` back on the journal (database) clock."""
    if dpone.journal_url.startswith("postgresql://"):
        _sql(dpone, "UPDATE rest_delivery_parent SET admitted_at = clock_timestamp() - "
                    "make_interval(days => ?) WHERE parent_id = ?", days, parent_id)
    else:
        _sql(dpone, "UPDATE rest_delivery_parent SET admitted_at = "
                    "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) WHERE parent_id = ?",
             f"-{days} days", parent_id)


def _keys(dpone: Dpone, parent_id: str) -> set[str]:
    rows = _sql(dpone, "SELECT payload_key, payload_document_key FROM rest_delivery_child "
                       "WHERE parent_id = ?", parent_id)
    return {key for row in rows for key in row}


def _stored(dpone: Dpone, keys: set[str]) -> set[str]:
    return {key for key in keys if (dpone.state / "artifacts" / key).is_file()}


def _audits(dpone: Dpone) -> list[tuple[Any, ...]]:
    return _sql(dpone, "SELECT operation_id, actor, transition_id FROM rest_delivery_audit "
                       "WHERE transition_id = 'operator_prune' ORDER BY audit_id")


def _standing(document: dict[str, Any]) -> dict[str, str]:
    return {parent["parent_id"]: parent["standing"] for parent in document["parents"]}


def test_prune_deletes_exactly_the_payloads_of_old_settled_deliveries_and_audits_it(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    old = str(_delivered(dpone.deliver(SYNC, WEEK_1, "--format", "json"))["parent_id"])
    young = str(_delivered(dpone.deliver(SYNC, WEEK_2, "--format", "json"))["parent_id"])
    old_keys, young_keys = _keys(dpone, old), _keys(dpone, young)
    assert len(old_keys) == 2 and not old_keys & young_keys  # payload bytes and document
    _age(dpone, old, PAYLOAD_DAYS + 1)
    _age(dpone, young, PAYLOAD_DAYS - 1)

    preview = _prune(dpone, "--format", "json")

    assert preview.code == 0, preview.out + preview.err
    document = preview.json()
    assert document["applied"] is False
    assert _standing(document) == {old: "eligible", young: "young"}
    assert set(document["deleted"]) == old_keys and document["kept"] == []
    assert _stored(dpone, old_keys) == old_keys  # a preview deletes nothing ...
    assert _audits(dpone) == []  # ... and writes nothing
    assert _sql(dpone, "SELECT count(*) FROM rest_delivery_parent "
                       "WHERE payloads_expired_at IS NOT NULL") == [(0,)]
    assert any("--apply" in line for line in document["next_commands"])

    applied = _prune(dpone, "--apply", "--actor", "retention-bot", "--format", "json")

    assert applied.code == 0, applied.out + applied.err
    done = applied.json()
    assert done["applied"] is True and set(done["deleted"]) == old_keys
    assert _standing(done) == {old: "expired", young: "young"}
    assert _stored(dpone, old_keys) == set()
    assert _stored(dpone, young_keys) == young_keys
    assert _audits(dpone) == [(old, "retention-bot", "operator_prune")]

    again = _prune(dpone, "--apply", "--format", "json").json()  # nothing left to do
    assert (again["deleted"], len(_audits(dpone))) == ([], 1)

    inspected = dpone.inspect(old, "--format", "json")
    assert inspected.code == 0, inspected.out + inspected.err
    shown = inspected.json()
    assert "payloads_expired_at" in shown
    assert [(a["command"], a["actor"]) for a in shown["operator_actions"]] == [
        ("prune", "retention-bot")]
    assert "payloads expired at" in dpone.inspect(old).out
    assert "payloads_expired_at" not in dpone.inspect(young, "--format", "json").json()

    resumed = dpone.resume(old, "--format", "json")
    assert resumed.code == 5, resumed.out + resumed.err
    assert resumed.json()["code"] == "retention.payloads_expired"
    refused = reconcile(dpone, f"{old}_0001", "--format", "json")
    assert refused.code == 5, refused.out + refused.err
    assert refused.json()["code"] == "retention.payloads_expired"
    assert dpone.resume(young, "--format", "json").code == 0  # the young one is untouched


def test_a_child_with_an_unknown_effect_keeps_every_payload_of_its_delivery(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    receiver.state.faults.install([DROP_SYNC])
    blocked = dpone.deliver(SYNC, WEEK_1, "--format", "json")
    assert blocked.code == 4, blocked.out + blocked.err
    parent = str(blocked.json()["parent_id"])
    assert blocked.json()["blocked"]["remote_effect"] == "UNKNOWN"
    keys = _keys(dpone, parent)
    _age(dpone, parent, 10 * PAYLOAD_DAYS)

    applied = _prune(dpone, "--apply", "--format", "json")

    assert applied.code == 0, applied.out + applied.err
    document = applied.json()
    assert _standing(document) == {parent: "unsettled"}
    assert document["parents"][0]["unsettled_children"] == [f"{parent}_0001"]
    assert document["deleted"] == []
    assert _stored(dpone, keys) == keys and _audits(dpone) == []
    assert "payloads_expired_at" not in dpone.inspect(parent, "--format", "json").json()


def _twin(registry: Path) -> str:
    """A second sync workload over the same rows and profile, to another resource: its
    payload bytes (content-addressed) are the same key as the first's; its documents differ."""
    source = (registry / "workloads" / f"{SYNC}.yaml").read_text(encoding="utf-8")
    twin = source.replace(f"name: {SYNC}", "name: measurements_sync_twin").replace(
        "resource: measurement_readings", "resource: measurement_readings_twin")
    (registry / "workloads" / "measurements_sync_twin.yaml").write_text(twin, encoding="utf-8")
    return "measurements_sync_twin"


def test_a_shared_payload_key_stays_while_another_delivery_still_needs_it(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    first = str(_delivered(dpone.deliver(SYNC, WEEK_1, "--format", "json"))["parent_id"])
    second = str(_delivered(dpone.deliver(_twin(dpone.registry), WEEK_1,
                                          "--format", "json"))["parent_id"])
    shared = _keys(dpone, first) & _keys(dpone, second)
    assert len(shared) == 1  # the payload bytes; each delivery has its own document
    _age(dpone, first, PAYLOAD_DAYS + 1)

    applied = _prune(dpone, "--apply", "--format", "json").json()

    assert _standing(applied) == {first: "expired", second: "young"}
    assert set(applied["deleted"]) == _keys(dpone, first) - shared
    assert applied["kept"] == [{"key": next(iter(shared)), "needed_by": [second]}]
    assert _stored(dpone, shared) == shared
    assert dpone.resume(second, "--format", "json").code == 0  # still readable

    _age(dpone, second, PAYLOAD_DAYS + 1)  # now nobody needs it
    later = _prune(dpone, "--apply", "--format", "json").json()

    assert set(later["deleted"]) == _keys(dpone, second)
    assert _stored(dpone, _keys(dpone, first) | _keys(dpone, second)) == set()
    assert [row[0] for row in _audits(dpone)] == [first, second]
