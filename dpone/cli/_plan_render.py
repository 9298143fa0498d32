"""How a plan comparison reads: text for a terminal, Markdown for a pull-request comment."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from dpone.contracts.documents import PlanComparison, PlanDiffDocument

_WIDTH = 60
_EFFECT = {"conflicts_on_next_run": "conflicts on the next run",
           "applied_new_intent_on_rerun": "applied: a rerun of its window is a new intent"}


def shown(value: Any, width: int = _WIDTH) -> str:
    """A JSON value on one line, cut to ``width`` characters (``absent`` for a missing field)."""
    if value is None:
        return "absent"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= width else text[:width - 1] + "…"


def _short(digest: str | None) -> str:
    return "absent" if digest is None else digest[:19] + "…"


def _side_line(label: str, comparison: PlanComparison) -> str:
    side = comparison.old if label == "old" else comparison.new
    if side is None:
        return f"  {label}  (none)"
    return f"  {label}  {side.digest}  {side.source}"


def comparison_text(comparison: PlanComparison) -> Iterator[str]:
    """The lines of one workload's comparison."""
    yield f"{comparison.name} ({comparison.environment}): {comparison.status}"
    yield _side_line("old", comparison)
    yield _side_line("new", comparison)
    for group in comparison.consequences:
        yield f"  {group.consequence}: {group.meaning}"
        width = max(len(c.path) for c in group.changes)
        for change in group.changes:
            yield f"    {change.path.ljust(width)}  {shown(change.old)} -> {shown(change.new)}"
    if comparison.identities:
        yield "  identities that changed"
        width = max(len(i.name) for i in comparison.identities)
        for identity in comparison.identities:
            yield (f"    {identity.name.ljust(width)}  {_short(identity.old)} -> "
                   f"{_short(identity.new)}")
            yield f"    {''.ljust(width)}  {identity.meaning}"
    if comparison.new_intent and comparison.old is not None and comparison.new is not None:
        yield ("  next run: a new delivery intent for every window; finish or reconcile the "
               "old plan's unfinished deliveries first")
    if comparison.journal is not None:
        exposure = comparison.journal
        yield (f"  journal {exposure.journal} ({exposure.environment_id}): "
               f"{len(exposure.deliveries)} delivery(ies) of this workload among the "
               f"{exposure.scanned} newest")
        for delivery in exposure.deliveries:
            yield (f"    {delivery.parent_id}  {delivery.boundary.render()}  {delivery.status}: "
                   f"{_EFFECT[delivery.effect]}")
    if comparison.children is not None:
        estimate = comparison.children
        yield (f"  children of {estimate.interval.render()} ({estimate.rows} rows): "
               f"{estimate.before} before, {estimate.after} after")


def _headline(document: PlanDiffDocument) -> str:
    changed = sum(1 for p in document.plans if p.changed)
    counts = ", ".join(f"{name} {count}" for name, count in document.consequences.items())
    return (f"{changed} of {len(document.plans)} plan(s) changed"
            + (f" (plans with a change of each class: {counts})" if counts else ""))


def diff_text(document: PlanDiffDocument, *, show_unchanged: bool = True) -> str:
    lines: list[str] = []
    for comparison in document.plans:
        if comparison.changed or show_unchanged:
            lines += [*comparison_text(comparison), ""]
    lines.append(_headline(document))
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def diff_markdown(document: PlanDiffDocument) -> str:
    """A pull-request comment: a summary table, then one section per changed plan."""
    lines = [f"### dpone plan diff: {_headline(document)}", "",
             "| plan | environment | status | consequences |", "|---|---|---|---|"]
    for p in document.plans:
        classes = ", ".join(g.consequence for g in p.consequences) or "-"
        lines.append(f"| `{p.name}` | {p.environment} | {p.status} | {classes} |")
    for p in (p for p in document.plans if p.changed):
        old = f"`{p.old.digest}`" if p.old else "(none)"
        new = f"`{p.new.digest}`" if p.new else "(none)"
        lines += ["", f"#### `{p.name}` ({p.environment}): {p.status}", "", f"{old} → {new}"]
        for group in p.consequences:
            lines += ["", f"**{group.consequence}**: {group.meaning}", "",
                      "| field | old | new |", "|---|---|---|"]
            lines += [f"| `{_cell(c.path)}` | `{_cell(shown(c.old))}` | `{_cell(shown(c.new))}` |"
                      for c in group.changes]
        if p.identities:
            lines += ["", "Identities that changed:", ""]
            lines += [f"- `{i.name}`: {i.meaning}" for i in p.identities]
        if p.new_intent and p.old is not None and p.new is not None:
            lines += ["", "**Next run: a new delivery intent for every window.** Finish or "
                          "reconcile the old plan's unfinished deliveries first."]
        if p.journal is not None and p.journal.deliveries:
            lines += ["", f"Deliveries of this workload in `{p.journal.environment_id}`:", ""]
            lines += [f"- `{d.parent_id}` {d.boundary.render()} {d.status}: {_EFFECT[d.effect]}"
                      for d in p.journal.deliveries]
        if p.children is not None:
            c = p.children
            lines += ["", f"Children of {c.interval.render()} ({c.rows} rows): "
                          f"{c.before} before, {c.after} after"]
    return "\n".join(lines) + "\n"
