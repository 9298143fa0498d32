"""The executor's shape, counted from its source: who writes the journal, where the protocol
families branch, how many lines it has.

* journal writers: the supervisor modules that call a write of the journal port (a method
  :data:`~dpone.executor.cuts.JOURNAL_WRITE_POINTS` names) on anything;
* family branches: the executor's comparisons and lookups of ``protocol_family``;
* lines: every line of every module under ``dpone/executor``.

    .venv/bin/python tools/executor_shape.py [--root DIR]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WRITES = frozenset({
    "admit_parent", "acquire_lease", "release_lease", "renew_lease", "begin_attempt",
    "plan_attempt", "enter_submitting", "transition", "settle_response", "reconcile",
    "record_orphan_marker", "record_operator_action", "promote_frontier", "set_mutation_gate",
    "set_revocation", "take_rate_turn", "release_active_slot", "expire_payloads"})
"""The journal port's writes (the keys of ``dpone.executor.cuts.JOURNAL_WRITE_POINTS``)."""


def journal_writers(supervisor: Path) -> dict[str, list[str]]:
    """Each supervisor module -> the journal writes it calls (``x.journal.<write>(...)`` or
    ``journal.<write>(...)``)."""
    found: dict[str, list[str]] = {}
    for path in sorted(supervisor.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = sorted({node.func.attr for node in ast.walk(tree)
                        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in WRITES and _on_journal(node.func.value)})
        if calls:
            found[path.name] = calls
    return found


def _on_journal(target: ast.expr) -> bool:
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return "journal" in name


def family_branches(executor: Path) -> list[str]:
    """``module:line`` of every read of ``protocol_family`` in the executor that decides
    something (a read inside an f-string only names the family in a message)."""
    found = []
    for path in sorted(executor.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        quoted = {id(node) for text in ast.walk(tree) if isinstance(text, ast.JoinedStr)
                  for node in ast.walk(text)}
        found += [f"{path.relative_to(executor)}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and node.attr == "protocol_family"
                  and id(node) not in quoted]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    executor = args.root / "dpone" / "executor"
    supervisor = executor / "supervisor"
    writers = journal_writers(supervisor)
    branches = family_branches(executor)
    lines = sum(len(path.read_text(encoding="utf-8").splitlines())
                for path in executor.rglob("*.py"))
    print(f"supervisor modules that write the journal: {len(writers)}")
    for module, calls in writers.items():
        print(f"  {module}: {', '.join(calls)}")
    print(f"family branches (reads of protocol_family): {len(branches)}: {', '.join(branches)}")
    print(f"executor lines: {lines}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
