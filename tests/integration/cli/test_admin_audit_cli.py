"""`dpone admin audit` over loopback, on both journals: the audit trail of a real delivery and
an operator's action, exported as one document, as NDJSON and for people; narrowed to one
delivery or to a journal time; bounded, saying where to continue; read-only; no secret in it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from dpone.receiver import ReceiverThread
from support.cli import TOKEN, Dpone, Run
from support.common import ROOT

SYNC = "measurements_sync"
WEEK_1 = ("2026-08-01", "2026-08-08")
WEEK_2 = ("2026-08-08", "2026-08-15")
SCHEMA = ROOT / "dpone" / "contracts" / "schemas" / "dpone.audit_export.v1.schema.json"


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal_url)


def _audit(dpone: Dpone, *extra: str) -> Run:
    return dpone("admin", "audit", "--journal", dpone.journal_url, *extra)


def _parent(run: Run) -> str:
    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["status"] == "completed", document
    return str(document["parent_id"])


def _export(dpone: Dpone, *extra: str) -> dict[str, Any]:
    run = _audit(dpone, "--format", "json", *extra)
    assert run.code == 0, run.out + run.err
    document = run.json()
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(
        document)
    return document


def test_the_audit_trail_of_deliveries_and_operator_actions_is_exported(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    first = _parent(dpone.deliver(SYNC, WEEK_1, "--format", "json"))
    second = _parent(dpone.deliver(SYNC, WEEK_2, "--format", "json"))
    resumed = dpone("delivery", "resume", "--operation-id", first, "--journal", dpone.journal_url,
                    "--artifacts", str(dpone.state / "artifacts"), "--plans",
                    str(dpone.state / "plans"), "--apply", "--actor", "ops@example",
                    "--format", "json")
    assert resumed.code == 0, resumed.out + resumed.err

    whole = _export(dpone)
    records = whole["records"]
    assert whole["truncated"] is False and whole["operation_id"] is None
    assert [r["audit_id"] for r in records] == sorted(r["audit_id"] for r in records)
    operations = {r["operation_id"] for r in records}
    assert any(op.startswith(first) for op in operations)
    assert any(op.startswith(second) for op in operations)
    decisions = {r["transition_id"] for r in records}
    assert {"sealed_submit", "operator_resume"} <= decisions
    submit = next(r for r in records if r["transition_id"] == "sealed_submit")
    assert submit["actor"].startswith("dpone-cli:") and submit["digests"]
    operator = next(r for r in records if r["transition_id"] == "operator_resume")
    assert (operator["actor"], operator["operation_id"]) == ("ops@example", first)
    assert operator["digests"]["command"] == "resume"

    mine = _export(dpone, "--operation-id", first)["records"]
    assert mine == [r for r in records if r["operation_id"].startswith(first)]
    later = _export(dpone, "--since", operator["at"])["records"]
    at = dt.datetime.fromisoformat(operator["at"])
    assert operator in later
    assert later == [r for r in records if dt.datetime.fromisoformat(r["at"]) >= at]

    bounded = _export(dpone, "--limit", "2")
    assert bounded["truncated"] is True and bounded["records"] == records[:2]
    cut = _audit(dpone, "--limit", "2")
    assert f"continue with --since {records[1]['at']}" in cut.out

    lines = _audit(dpone, "--format", "ndjson", "--operation-id", second)
    assert lines.code == 0, lines.err
    assert [json.loads(line) for line in lines.out.splitlines()] == [
        r for r in records if r["operation_id"].startswith(second)]

    table = _audit(dpone, "--operation-id", first)
    assert table.code == 0, table.err
    assert table.out.startswith(f"{len(mine)} audit record(s) of {first}")
    assert "operator_resume" in table.out and "ops@example" in table.out

    assert _export(dpone) == whole  # reading the trail writes none of it
    for run in (lines, table, cut):
        assert TOKEN not in run.out + run.err
    assert TOKEN not in json.dumps(whole)


def test_a_since_that_is_not_a_time_is_refused_before_the_journal_is_read(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    run = _audit(dpone, "--since", "yesterday", "--format", "ndjson")
    assert run.code == 2, run.out + run.err
    assert run.json()["code"] == "input.invalid_argument"
    assert "--since 'yesterday'" in run.json()["message"]
