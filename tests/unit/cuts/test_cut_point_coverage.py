"""The cut points are collected from the code, and no journal write of a delivery run escapes them.

* every journal method whose transaction is a write (``write`` or ``critical``: read from the
  ``_run`` calls of the journal adapters' source) and that a delivery run's journal
  (:class:`SupervisorJournal`) offers is bracketed by :class:`CuttingJournal`:
  ``before:<point>``, the write, ``after:<point>``;
* a journal write the port does not offer is never called from ``dpone/executor``, and every
  journal call in ``dpone/executor`` is a port method;
* every trigger kind of the design contract has its transition cut point;
* the CLI hands the executor only the journal and store :func:`delivery_ports` assembled.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import MagicMock

import pytest

from dpone.contracts.design import load_state_contract
from dpone.contracts.ports import DeliveryJournalPort, DeliveryJournalView, SupervisorJournal
from dpone.executor.cuts import (
    JOURNAL_WRITE_POINTS,
    CutHook,
    CuttingArtifacts,
    CuttingJournal,
    When,
    cut_points,
    parse_cut,
    transition_point,
)
from support.common import ROOT

PACKAGE = ROOT / "dpone"
JOURNAL_ADAPTERS = ("journal/_port.py", "journal/postgres/_journal.py",
                    "journal/sqlite/_journal.py")
WRITE_KINDS = frozenset({"write", "critical"})
DRIVERS = frozenset({"deliver", "deliver_sync", "resume"})
"""The executor entry points that take a journal and an artifact store."""


def _kind_of(call: ast.Call) -> str:
    kind = call.args[1] if len(call.args) > 1 else next(
        (word.value for word in call.keywords if word.arg == "kind"), None)
    if not isinstance(kind, ast.Constant) or not isinstance(kind.value, str):
        raise AssertionError(f"line {call.lineno}: a _run call whose transaction kind is not a "
                             "literal cannot be classified; name the kind")
    return kind.value


def journal_transactions() -> dict[str, set[str]]:
    """Every method of the journal adapters -> the kinds of the transactions it runs."""
    kinds: dict[str, set[str]] = {}
    for relative in JOURNAL_ADAPTERS:
        tree = ast.parse((PACKAGE / relative).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef) or node.name == "_run":
                continue
            for call in ast.walk(node):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr == "_run"):
                    kinds.setdefault(node.name, set()).add(_kind_of(call))
    return kinds


def _methods(*protocols: type) -> set[str]:
    return {name for protocol in protocols for cls in protocol.__mro__
            for name, value in vars(cls).items()
            if not name.startswith("_") and callable(value)}


def port_methods() -> set[str]:
    return _methods(DeliveryJournalView, DeliveryJournalPort)


def run_methods() -> set[str]:
    """What a delivery run uses of the journal: all that :class:`CuttingJournal` offers."""
    return _methods(SupervisorJournal)


def journal_writes() -> set[str]:
    return {name for name, kinds in journal_transactions().items() if kinds & WRITE_KINDS}


def test_the_journal_source_is_classified() -> None:
    kinds = journal_transactions()
    assert {"admit_parent", "enter_submitting", "transition", "load_parent"} <= set(kinds)
    assert set().union(*kinds.values()) <= {"read", *WRITE_KINDS}


def test_every_write_of_a_run_has_a_cut_point() -> None:
    missing = sorted((journal_writes() & run_methods()) - set(JOURNAL_WRITE_POINTS))
    assert not missing, f"journal writes without a cut point: {missing}"
    assert set(JOURNAL_WRITE_POINTS) <= run_methods() <= port_methods()


class Passages(CutHook):
    """Records each passage in ``log`` and never fires."""

    def __init__(self, log: list[str]) -> None:
        super().__init__(parse_cut("before:admission@999999", cut_points()))
        self.log = log

    def __call__(self, when: When, point: str) -> None:
        self.log.append(f"{when}:{point}")


class FakeJournal:
    """Records each call in ``log``; answers what the proxy reads of an answer (the marker key
    of a planned attempt, also as ``begin_attempt`` answers it)."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def __getattr__(self, name: str) -> Any:
        def call(*_args: object, **_kwargs: object) -> object:
            self.log.append(f"call:{name}")
            planned = SimpleNamespace(marker_key="markers/x/op/1.json")
            return SimpleNamespace(marker_key=planned.marker_key, attempt=planned)
        return call


def _arguments(method: str) -> tuple[list[object], dict[str, object]]:
    args: list[object] = []
    kwargs: dict[str, object] = {}
    for parameter in list(inspect.signature(getattr(CuttingJournal, method)).parameters.values())[1:]:
        value: object = MagicMock(name=parameter.name)
        if parameter.name == "request" and method in TRANSITION_WRITES:
            value = SimpleNamespace(transition_id="submitting_sync_success")
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = value
        else:
            args.append(value)
    return args, kwargs


TRANSITION_WRITES = ("transition", "settle_response")
"""Writes cut at the point of their (first) transition's trigger kind."""


@pytest.mark.parametrize("method", sorted(JOURNAL_WRITE_POINTS))
def test_each_write_is_bracketed_by_its_cut_point(method: str) -> None:
    log: list[str] = []
    journal = CuttingJournal(FakeJournal(log), Passages(log))  # type: ignore[arg-type]
    args, kwargs = _arguments(method)
    getattr(journal, method)(*args, **kwargs)
    point = (transition_point("submitting_sync_success") if method in TRANSITION_WRITES
             else JOURNAL_WRITE_POINTS[method])
    assert log == [f"before:{point}", f"call:{method}", f"after:{point}"]
    assert ("before", point) in cut_points() and ("after", point) in cut_points()


@pytest.mark.parametrize("method", sorted(run_methods() - set(JOURNAL_WRITE_POINTS)))
def test_reads_pass_through_without_a_cut(method: str) -> None:
    assert method not in journal_writes(), f"{method} writes but the proxy does not cut it"
    log: list[str] = []
    journal = CuttingJournal(FakeJournal(log), Passages(log))  # type: ignore[arg-type]
    args, kwargs = _arguments(method)
    getattr(journal, method)(*args, **kwargs)
    assert log == [f"call:{method}"]


def test_the_marker_write_is_cut_apart_from_evidence() -> None:
    log: list[str] = []
    hook = Passages(log)
    journal = CuttingJournal(FakeJournal([]), hook)  # type: ignore[arg-type]
    store = CuttingArtifacts(FakeJournal(log), journal, hook)  # type: ignore[arg-type]
    journal.plan_attempt("op", MagicMock())
    log.clear()
    store.put_bytes("markers/x/op/1.json", b"{}")
    store.put_bytes("evidence/op/attempt-1/submit-response.json", b"{}")
    assert log == ["before:marker", "call:put_bytes", "after:marker",
                   "before:evidence", "call:put_bytes", "after:evidence"]


def test_the_marker_of_an_attempt_begun_with_its_lease_is_cut_as_a_marker() -> None:
    log: list[str] = []
    hook = Passages(log)
    journal = CuttingJournal(FakeJournal([]), hook)  # type: ignore[arg-type]
    store = CuttingArtifacts(FakeJournal(log), journal, hook)  # type: ignore[arg-type]
    journal.begin_attempt("op", "holder", 60)
    log.clear()
    store.put_bytes("markers/x/op/1.json", b"{}")
    assert log == ["before:marker", "call:put_bytes", "after:marker"]


def test_every_trigger_kind_of_the_contract_has_a_transition_cut_point() -> None:
    kinds = {listed.trigger.kind.value for listed in load_state_contract().transitions.values()}
    points = {point for _, point in cut_points()}
    assert {f"transition.{kind}" for kind in kinds} <= points


def _executor_modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted((PACKAGE / "executor").rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def _journal_calls(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """``<...>.journal.<method>(...)``, ``<...>._journal.<method>(...)`` and ``journal.<method>(...)``
    calls."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        named = (owner.attr if isinstance(owner, ast.Attribute)
                 else owner.id if isinstance(owner, ast.Name) else None)
        if named in ("journal", "_journal"):
            yield node.lineno, node.func.attr


def test_the_executor_calls_journal_writes_only_through_the_port() -> None:
    """Every journal call of the executor is a port method; every write a delivery run makes
    (the supervisor's) has its cut point."""
    ports = port_methods()
    calls = [(path.relative_to(ROOT), line, method)
             for path, tree in _executor_modules() for line, method in _journal_calls(tree)]
    assert calls, "no journal call found: the scan is broken"
    outside = [call for call in calls if call[2] not in ports]
    assert not outside, f"executor journal calls outside the cut port: {outside}"
    supervisor = Path("dpone", "executor", "supervisor")
    written = {method for path, _, method in calls if path.parent == supervisor} & journal_writes()
    assert written <= set(JOURNAL_WRITE_POINTS), "a delivery run writes past its cut points"
    assert {"admit_parent", "enter_submitting", "transition", "promote_frontier"} <= written


def _cli_driver_calls() -> Iterator[tuple[Path, ast.Call, list[ast.With]]]:
    """Every call of an executor driver in ``dpone/cli``, with the ``with`` blocks around it."""
    for path in sorted((PACKAGE / "cli").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node: ast.AST, withs: list[ast.With]) -> Iterator[tuple[ast.Call, list[ast.With]]]:
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in DRIVERS):
                yield node, withs
            inner = [*withs, node] if isinstance(node, ast.With) else withs
            for child in ast.iter_child_nodes(node):
                yield from visit(child, inner)

        for call, withs in visit(tree, []):
            yield path, call, withs


def test_the_cli_drives_the_executor_only_with_the_assembled_ports() -> None:
    calls = list(_cli_driver_calls())
    assert calls, "no executor driver call found in dpone/cli: the scan is broken"
    for path, call, withs in calls:
        bound: set[str] = set()
        for block in withs:
            for item in block.items:
                made = item.context_expr
                if (isinstance(made, ast.Call) and isinstance(made.func, ast.Name)
                        and made.func.id == "delivery_ports" and item.optional_vars is not None):
                    bound |= {name.id for name in ast.walk(item.optional_vars)
                              if isinstance(name, ast.Name)}
        where = f"{path.relative_to(ROOT)}:{call.lineno}"
        assert bound, f"{where}: {ast.unparse(call.func)} runs outside `with delivery_ports(...)`"
        passed = {arg.id for arg in call.args if isinstance(arg, ast.Name)}
        assert len(passed & bound) >= 3, (
            f"{where}: the journal, store and transport must be the ones delivery_ports made")
