"""The process-cut fault matrix (acceptance): every cut point, both protocol families, both
journal dialects, and receiver faults on selected cells.

The cut points come from the code: an uncut ``deliver`` of each family runs with
``DPONE_TEST_CUT=trace`` and names every point it passes; each one becomes a cell (its first
occurrence), on SQLite and on PostgreSQL. A receiver fault (commit then reset, 429, 5xx after
commit, expired receipt) traced the same way adds the points it makes the run pass that the
plain run does not (a same-key replay, the transport record), alternating dialects. A few cells
cut the second child of a two-child delivery.

Each cell is killed with SIGKILL, restarted from another process in a fresh working directory,
and finished by an operator with ``inspect`` / ``reconcile`` / ``resume`` only
(:mod:`support.fault_matrix`). The record goes to ``test_artifacts/remote_effect_fault_matrix.json``
(``dpone.remote_effect_fault_matrix.v1``, validated against its published schema). Across the
matrix: 0 duplicate mutations, 0 false successes, 0 unproved resends, every cell killed at its
point and completed after at most three operator commands.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Final

import jsonschema
import pytest

from dpone.contracts.documents import (
    FAULT_MATRIX_SCHEMA_ID,
    MatrixCell,
    RemoteEffectFaultMatrix,
)
from support.common import ROOT
from support.fault_matrix import (
    LEASE_TTL_S,
    MAX_OPERATOR_COMMANDS,
    ONE_CHILD,
    TWO_CHILDREN,
    Cell,
    CellSpec,
    Journals,
    fault_rules,
    matrix_document,
    new_receiver,
    run_cell,
    trace,
)

pytestmark = pytest.mark.fault_matrix

ARTIFACT: Final = ROOT / "test_artifacts" / "remote_effect_fault_matrix.json"
SCHEMA: Final = ROOT / "dpone" / "contracts" / "schemas" / f"{FAULT_MATRIX_SCHEMA_ID}.schema.json"
WORKERS: Final = 4
"""Cells run side by side: most of a cell's time is the lost run's lease running out."""
DIALECTS: Final = ("sqlite", "postgres")
FAMILIES: Final = ("sync_batch", "async_bulk_job")
FAULTS: Final = {"sync_batch": ("commit_then_reset", "throttle_429", "server_error_5xx"),
                 "async_bulk_job": ("commit_then_reset", "throttle_429", "server_error_5xx")}
REQUEST_POINTS: Final = frozenset({"submitting", "send", "response"})
"""The points a receiver fault's extra passages are cut at: the request boundary and the
SUBMITTING CAS (and every transition, by prefix)."""
EXPIRED_RECEIPT_CUTS: Final = ("before:transition.observation@1", "after:transition.observation@1")
SECOND_CHILD_CUTS: Final = ("before:submitting@2", "after:send@2", "before:frontier@2")
MIN_CELLS: Final = 60
KNOWN_DEFECTS: Final[dict[str, str]] = {}
"""Cells that expose a product defect not fixed yet: each must still end exactly so (stopped
with ``artifact.conflict``, nothing applied twice), so a fix shows up here and the entry goes."""


def _point(passage: str) -> str:
    return passage.split(":", 1)[1].split("@", 1)[0]


def _first_passages(passages: list[str]) -> list[str]:
    """Each distinct ``when:point`` at its first occurrence, in the order the run passed."""
    seen: dict[str, str] = {}
    for passage in passages:
        seen.setdefault(passage.split("@", 1)[0], passage)
    return list(seen.values())


def _submit_loop(passages: list[str]) -> list[str]:
    """The passages of the first child's submit loop: up to the mutation lease's release, which
    is its own write (``before:lease_release@1``) or part of the transaction that settles the
    submit answer (through ``after:transition.submit_response@1``)."""
    for index, passage in enumerate(passages):
        if passage == "before:lease_release@1":
            return passages[:index]
        if passage == "after:transition.submit_response@1":
            return passages[:index + 1]
    raise AssertionError("the traced run never ended its submit loop")


def _fault_cuts(base: list[str], faulted: list[str]) -> list[str]:
    """Passages the faulted run's submit loop makes that the plain run does not, at the request
    boundary, the SUBMITTING CAS or a transition. What follows the loop depends on how often a
    job is polled, so it is left to the plain cells."""
    plain = set(base)
    loop = _submit_loop(faulted)
    return [p for p in dict.fromkeys(loop) if p not in plain
            and (_point(p) in REQUEST_POINTS or _point(p).startswith("transition."))]


def test_process_cut_fault_matrix(tmp_path: Path, journals: Journals) -> None:
    started = time.monotonic()
    with ExitStack() as stack:
        def cell(spec: CellSpec) -> Cell:
            root = tmp_path / f"cell-{len(made)}"
            root.mkdir()
            receiver = new_receiver()
            stack.callback(receiver.__exit__, None, None, None)
            made.append(Cell(spec, root, journals.url(spec.dialect, root), receiver))
            return made[-1]

        made: list[Cell] = []

        def traced(family: str, fault: str = "none") -> list[str]:
            probe = cell(CellSpec("sqlite", family, "trace", fault))
            for rule in fault_rules(family, fault):
                probe.receiver.state.faults.install([rule])
            return trace(probe)

        specs: list[CellSpec] = []
        for family in FAMILIES:
            base = traced(family)
            specs += [CellSpec(dialect, family, cut) for dialect in DIALECTS
                      for cut in _first_passages(base)]
            for index, fault in enumerate(FAULTS[family]):
                for offset, cut in enumerate(_fault_cuts(base, traced(family, fault))):
                    dialect = DIALECTS[(index + offset) % 2]
                    specs.append(CellSpec(dialect, family, cut, fault))
        specs += [CellSpec(DIALECTS[i % 2], "async_bulk_job", cut, "receipt_expired")
                  for i, cut in enumerate(EXPIRED_RECEIPT_CUTS)]
        specs += [CellSpec(DIALECTS[i % 2], "async_bulk_job", cut, interval=TWO_CHILDREN)
                  for i, cut in enumerate(SECOND_CHILD_CUTS)]
        assert len(specs) >= MIN_CELLS
        assert all(spec.interval in (ONE_CHILD, TWO_CHILDREN) for spec in specs)
        cells_to_run = [cell(spec) for spec in specs]
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            cells: list[MatrixCell] = list(pool.map(run_cell, cells_to_run))
    document = matrix_document(cells, time.monotonic() - started, LEASE_TTL_S)
    rendered = document.model_dump(mode="json", by_alias=True)
    ARTIFACT.parent.mkdir(exist_ok=True)
    ARTIFACT.write_text(json.dumps(rendered, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(
        rendered)
    assert RemoteEffectFaultMatrix.model_validate_json(ARTIFACT.read_text(encoding="utf-8")) \
        == document
    totals = document.totals
    print(f"\nfault matrix: {totals.cells} cells ({totals.cells_by_dialect}, "
          f"{totals.cells_by_family}, faults {totals.cells_by_receiver_fault}); killed "
          f"{totals.killed}, completed {totals.completed}; duplicate mutations "
          f"{totals.duplicate_mutations}, false successes {totals.false_successes}, unproved "
          f"resends {totals.unproved_resends}; max operator commands "
          f"{totals.max_operator_commands}; max recovery wait {totals.max_recovery_wait_s} s "
          f"(lease TTL {LEASE_TTL_S} s); wall {totals.wall_time_s} s -> {ARTIFACT}")
    defective = [c for c in cells if c.cell_id.split("/", 1)[1] in KNOWN_DEFECTS]
    assert all(c.killed and not c.completed and c.commands[-1].status == "artifact.conflict"
               for c in defective), "a known defect is fixed: remove it from KNOWN_DEFECTS"
    failed = [c.cell_id for c in cells if c not in defective and (
        not (c.killed and c.completed) or c.operator_commands > MAX_OPERATOR_COMMANDS)]
    assert not failed, f"cells not killed at their point or not completed: {failed}"
    assert totals.duplicate_mutations == 0
    assert totals.false_successes == 0
    assert totals.unproved_resends == 0
    assert all(c.rows_applied == c.rows_sealed for c in cells if c not in defective)
