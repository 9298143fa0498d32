"""Guards around a delivery, on both journals: a changed source re-sealed for a delivered
boundary is refused before any request, and the credential never leaves the transport."""

from __future__ import annotations

import datetime as dt
import logging
import os
import shutil
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from dpone.contracts import DponeError, RemoteEffect
from dpone.contracts.journal import DeliveryJournalPort
from dpone.executor.supervisor import (
    DeliveryBlocked,
    DeliveryCompleted,
    DeliveryResult,
    parent_admission,
)
from support.common import EXAMPLES
from support.delivery import TOKEN, TOKEN_ENV, HarnessFactory, payload_text


def _change_one_reading(csv_path: Path, day: str) -> None:
    """Add 1 to the ``reading`` of the first row of ``day``; every other byte is kept."""
    lines = csv_path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[0].split(",")[3] == "reading"
    index = next(n for n, line in enumerate(lines) if line.startswith(f"{day},"))
    fields = lines[index].split(",", 4)
    fields[3] = f"{float(fields[3]) + 1:.3f}"
    lines[index] = ",".join(fields)
    csv_path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize("family", ["sync", "async"])
def test_a_changed_source_resealed_for_a_delivered_boundary_is_an_intent_conflict(
        harness: HarnessFactory, journal: DeliveryJournalPort, tmp_path: Path,
        family: str) -> None:
    registry = tmp_path / "examples"
    shutil.copytree(EXAMPLES, registry)
    delivered = harness(family, registry=registry)
    first = delivered.run()
    assert isinstance(first, DeliveryCompleted), first
    _change_one_reading(registry / "data" / "measurements.csv", "2026-08-02")
    changed = harness(family, registry=registry)
    old, new = delivered.topology.children[0], changed.topology.children[0]
    assert new.identities.delivery_key == old.identities.delivery_key
    assert new.identities.mutation_intent_digest != old.identities.mutation_intent_digest
    assert changed.topology.parent_plan_digest != delivered.topology.parent_plan_digest
    before = delivered.requests()

    with pytest.raises(DponeError) as refused:
        changed.run()

    assert refused.value.code == "REST_DELIVERY_INTENT_CONFLICT"
    assert delivered.requests() == before  # refused at admission: not one HTTP request
    assert changed.steps == []
    admission = parent_admission(changed.plan, changed.topology)
    assert journal.find_parent(admission.tenancy, admission.parent_plan_digest) is None
    parent = journal.load_parent(first.parent_id)
    assert parent.checkpoint_frontier == len(delivered.topology.children)
    assert {c.state_name for c in parent.children} == {"final_succeeded_full_promoted"}
    assert delivered.ledger()["mutations_total"] == len(delivered.topology.children)


def _windows(start: int, end: int) -> tuple[dt.date, dt.date]:
    return dt.date(2026, 8, start), dt.date(2026, 8, end)


def test_the_credential_never_appears_in_output_logs_artifacts_journal_or_results(
        harness: HarnessFactory, journal_contents: Callable[[], bytes],
        caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    assert os.environ[TOKEN_ENV] == TOKEN
    sentinel = TOKEN.encode("utf-8")
    results: list[DeliveryResult] = []
    texts: list[str] = []

    sync_ok = harness("sync", _windows(1, 5))
    results.append(sync_ok.run())
    async_ok = harness("async", _windows(1, 5))
    results.append(async_ok.run())
    # An UNKNOWN effect keeps the domain's only remote-job slot: each family's last.
    sync_partial = harness("sync", _windows(9, 13))
    sync_partial.fail_submit("partial", accepted_rows=10)
    results.append(sync_partial.run())
    sync_drop = harness("sync", _windows(5, 9))
    sync_drop.fail_submit("commit_then_drop")
    results.append(sync_drop.run())
    async_replay = harness("async", _windows(5, 9))
    async_replay.fail_submit("commit_then_drop")
    results.append(async_replay.run())
    async_throttled = harness("async", _windows(9, 13))
    async_throttled.fail_submit("status", status=429, retry_after=9999)
    results.append(async_throttled.run())

    codes = [getattr(r, "code", r.kind) for r in results]
    assert codes == ["completed", "completed", "REST_DELIVERY_PARTIALLY_APPLIED",
                     "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN", "completed",
                     "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET"], results
    assert isinstance(results[3], DeliveryBlocked)
    assert results[3].remote_effect is RemoteEffect.UNKNOWN
    texts += [repr(r) for r in results] + [r.model_dump_json() for r in results]
    texts += [repr(h.transport) for h in (sync_ok, async_ok)]
    captured = capfd.readouterr()
    texts += [captured.out, captured.err, caplog.text]
    assert caplog.records, "nothing was logged: the capture is not working"
    for record in caplog.records:
        texts += [record.getMessage(), repr(record.args), record.exc_text or ""]
        if record.exc_info:
            texts.append("".join(traceback.format_exception(*record.exc_info)))
    leaks = [text[:200] for text in texts if TOKEN in text]
    assert leaks == []
    scanned = list(payload_text(sync_ok.store))  # payloads, documents, markers, evidence
    assert [str(path) for path, data in scanned if sentinel in data] == []
    markers = [h.journal.list_attempts(h.child(1).operation_id)[0]["marker_key"]
               for h in (sync_ok, async_ok)]
    assert all((sync_ok.store.root / key).is_file() for key in markers)
    assert any(path.name == "result.json" for path, _ in scanned)  # the partial's evidence
    stored = journal_contents()
    assert stored and sentinel not in stored
    assert results[0].kind == "completed" and b"final_succeeded_full_promoted" in stored
