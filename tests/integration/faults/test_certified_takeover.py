"""A kill during an asynchronous submit, recovered by one `resume` under a certified fence.

Each cell is a fault-matrix cell (:mod:`support.fault_matrix`: `dpone deliver` SIGKILLed at a
cut point, then restarted from another process in a fresh working directory) whose registry
first certifies the async profile against the cell's own mock receiver (`dpone profile certify
--level local-live`): key binding and key retention PASS, the retention tested for
``RETENTION_DELAY_S``. The plan then carries that retention, and the restart's takeover of the
lost submit replays the same key (the receiver answers with the first job, or takes the first
request that never left): completed by the one `resume`, no operator command, no duplicate.
A certification whose tested retention is 0 s covers no takeover: the lost submit is recorded
UNKNOWN and an operator reconciles it, as without a certification.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Final

import pytest

from dpone.cli._inputs import close_quietly, open_existing_journal
from dpone.contracts.documents import MatrixCell
from support.cli import TOKEN, TOKEN_ENV
from support.common import ROOT
from support.fault_matrix import (
    Cell,
    CellSpec,
    Journals,
    new_receiver,
    run_cell,
    run_dpone_process,
)

pytestmark = pytest.mark.fault_matrix

PROFILE: Final = "mock.dataset-jobs@1"
RETENTION_DELAY_S: Final = 15
"""Longer than a lost run's lease (4 s) plus the restart's wait for it."""
CUTS: Final = ("after:submitting@1", "after:send@1")
"""Killed with the attempt entered and nothing sent, and with the job created at the receiver."""


def _certify(cell: Cell, retention_delay_s: int) -> dict[str, str]:
    """Certify the async profile against the cell's receiver into its registry (its own
    process, as the cells' commands); the verdicts."""
    work = cell.root / "certify"
    work.mkdir()
    env = {**os.environ, TOKEN_ENV: TOKEN, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    code, stdout, stderr = run_dpone_process([
        "profile", "certify", PROFILE, "--binding", "mock_measurements", "--environment",
        "local-dev", "--level", "local-live", "--registry", str(cell.registry), "--artifacts",
        str(cell.artifacts), "--retention-delay", str(retention_delay_s), "--max-wait", "2",
        "--format", "json"], work, env)
    assert stdout.strip(), f"certify exited {code}: {stderr[-2000:]}"
    return {case["case"]: case["verdict"] for case in json.loads(stdout)["cases"]}


def _attempt_outcomes(cell: Cell) -> list[str | None]:
    journal = open_existing_journal(cell.journal_url, environment_id="local-dev")
    try:
        parent = journal.load_parent(journal.list_deliveries(1)[0].parent_id)
        (child,) = parent.children
        return [a["outcome"] for a in journal.list_attempts(child.operation_id)]
    finally:
        close_quietly(journal)


def test_a_kill_during_an_async_submit_is_recovered_by_one_resume(
        tmp_path: Path, journals: Journals) -> None:
    specs = [(CellSpec(dialect, "async_bulk_job", cut), RETENTION_DELAY_S)
             for dialect in ("sqlite", "postgres") for cut in CUTS]
    specs.append((CellSpec("postgres", "async_bulk_job", "after:send@1"), 0))
    with ExitStack() as stack:
        def ran(index: int) -> tuple[MatrixCell, dict[str, str], int, list[str | None]]:
            spec, delay = specs[index]
            root = tmp_path / f"cell-{index}"
            root.mkdir()
            receiver = new_receiver()
            stack.callback(receiver.__exit__, None, None, None)
            cell = Cell(spec, root, journals.url(spec.dialect, root), receiver)
            verdicts = _certify(cell, delay)
            before = receiver.state.ledger.duplicate_mutations
            record = run_cell(cell)
            duplicates = receiver.state.ledger.duplicate_mutations - before
            return record, verdicts, duplicates, _attempt_outcomes(cell)

        with ThreadPoolExecutor(max_workers=len(specs)) as pool:
            results = list(pool.map(ran, range(len(specs))))
    for (_, delay), (record, verdicts, duplicates, outcomes) in zip(specs, results,
                                                                     strict=True):
        where = f"{record.cell_id} (retention {delay} s): {[c.argv for c in record.commands]}"
        assert verdicts["key_payload_binding"] == verdicts["key_retention"] == "PASS", verdicts
        assert record.killed and record.completed, where
        assert duplicates == 0 and record.false_successes == 0, where
        assert record.unproved_resends == 0 and record.rows_applied == record.rows_sealed, where
        if delay:
            # One restart, no operator: the lost attempt ended by the takeover's replay.
            assert record.operator_commands == 0, where
            assert [c.role for c in record.commands if c.role != "lease_wait"] == [
                "cut", "discovery", "restart"], where
            assert outcomes[0] == "submitting_takeover_fenced_replay", outcomes
            assert outcomes[-1] is not None and len(outcomes) == 2, outcomes
        else:
            # A retention that covers no takeover: UNKNOWN, and an operator's reconciliation.
            assert record.operator_commands >= 1, where
            assert outcomes[0] == "submitting_mutation_lease_lost", outcomes
    print(f"\ncertified takeover: {len(results)} cells, "
          f"{sum(r[0].operator_commands == 0 for r in results)} recovered by one resume, "
          f"duplicates {sum(r[2] for r in results)}")
