"""`dpone plan diff`: what changed between two plans, grouped by what it means for deliveries.

``OLD`` and ``NEW`` are each a plan file (a plan store's ``plans/sha256/<hex>.json`` or a golden),
a digest ``sha256:<hex>`` in the plan store, or a workload file compiled now. ``--base REF``
instead compiles the registry as it was at a git ref against the working tree, workload by
workload. Exit 0 without a change, 1 with one, 2 on an error (as ``git diff --exit-code``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Sequence
from pathlib import Path

import click

from dpone.cli._environment import registry_defaults, run_control_plane
from dpone.cli._inputs import DEFAULT_PLANS, PLAN_DIGEST_PREFIX, CalendarDate, stored_plan
from dpone.cli._output import emit_json, invalid_argument, run_guarded
from dpone.cli._plan_all import WORKLOAD_SUFFIXES, compile_all, workload_files
from dpone.cli._plan_compare import Side, compare, diff_document
from dpone.cli._plan_render import diff_markdown, diff_text
from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.documents import PlanComparison
from dpone.plans import read_plan_file


def _side(argument: str, registry: Path | None, plans: Path) -> Side:
    """A plan file, a stored digest or a workload compiled now."""
    if argument.startswith(PLAN_DIGEST_PREFIX):
        return Side(stored_plan(plans, argument), argument, f"{argument} in {plans}")
    path = Path(argument)
    if not path.is_file():
        raise DponeError(code="input.not_found", message=f"no plan or workload file {argument}",
                         hint="Name a plan file, a golden, a workload file (with --registry) or "
                              "sha256:<hex> in the plan store (--plans).")
    if path.suffix in WORKLOAD_SUFFIXES:
        if registry is None:
            raise invalid_argument(f"{argument} is a workload: compiling it needs --registry",
                          "Add --registry DIR (the registry the workload compiles against).")
        compiled = compile_workload(path, registry, workload_display=argument,
                                    registry_display=str(registry))
        return Side(compiled.plan, compiled.digest, argument)
    plan, digest = read_plan_file(path)
    return Side(plan, digest, argument)


def _inside(path: Path, registry: Path, what: str) -> Path:
    try:
        return path.resolve().relative_to(registry.resolve())
    except ValueError as error:
        raise invalid_argument(f"{what} {path} is outside the registry {registry}",
                      "--base exports the registry directory at the ref: keep workloads "
                      "under it.") from error


def _based(ref: str, registry: Path, tree: tuple[Path, Path], workloads: Sequence[Path],
           directory: Path) -> list[tuple[Side | None, Side | None, Path]]:
    """(old, new, the old side's registry) of every workload, matched by golden name."""
    top, base = tree
    new_files = list(workloads) or workload_files(directory)
    old_files = [base / _inside(f, registry, "workload") for f in new_files] if workloads \
        else workload_files(base / _inside(directory, registry, "--workloads"))
    old_files = [f for f in old_files if f.is_file()]
    label = {f: f"{ref}:{f.relative_to(top).as_posix()}" for f in old_files}
    new = {c.name: c for c in compile_all(registry, new_files)}
    old = {c.name: c for c in compile_all(base, old_files, display=label)}
    return [(Side(old[n].plan, old[n].digest, label[old[n].workload]) if n in old else None,
             new[n].side() if n in new else None, base) for n in sorted(old.keys() | new.keys())]


def _exposure(comparison: PlanComparison, old: Side, registry: Path | None,
              journal: str | None, environment_journal: bool, limit: int) -> PlanComparison:
    from dpone.cli._plan_exposure import journal_exposure  # noqa: PLC0415 - with a journal

    if not comparison.new_intent:
        return comparison
    url = journal
    if url is None:
        if registry is None or not environment_journal:
            return comparison
        url = run_control_plane(registry, old.plan.environment.ref, journal=None,
                                artifacts=None, plans=None).journal
    environment = old.plan.environment
    exposure = journal_exposure(old, url, environment.snapshot.environment_id,
                                environment.operation_namespace, limit)
    return comparison.model_copy(update={"journal": exposure})


@click.command()
@click.argument("plans_given", nargs=-1, metavar="OLD NEW | [WORKLOAD...]")
@click.option("--base", "base", metavar="REF", default=None,
              help="Compile the registry as it was at this git ref (branch, tag, commit) "
                   "against the working tree; arguments then name workloads (default: all).")
@click.option("--registry", "registry", type=click.Path(path_type=Path, file_okay=False),
              default=None, help="Registry root: compiles workload arguments, --base, and "
                                 "the source an estimate reads.")
@click.option("--workloads", "workloads", type=click.Path(path_type=Path, file_okay=False),
              default=None, show_default="<registry>/workloads",
              help="With --base: the directory searched for workload files.")
@click.option("--plans", "plans", type=click.Path(path_type=Path, file_okay=False),
              default=None, show_default=f"<registry>/{DEFAULT_PLANS}",
              help="Plan store holding plans/sha256/<hex>.json for sha256:<hex> arguments.")
@click.option("--journal", "journal", default=None, metavar="URL",
              help="Name the deliveries of each workload with an identity or payload change "
                   "in this journal (read-only).")
@click.option("--environment-journal", "environment_journal", is_flag=True, default=False,
              help="As --journal, with the journal the plan's environment file names.")
@click.option("--journal-limit", "journal_limit", type=click.IntRange(1, 10_000),
              default=1000, show_default=True, help="Newest deliveries read from the journal.")
@click.option("--interval-start", "interval_start", type=CalendarDate(), default=None,
              help="With --interval-end: count the children the interval is cut into under "
                   "each plan (reads the source; seals into a scratch store).")
@click.option("--interval-end", "interval_end", type=CalendarDate(), default=None,
              help="End of the estimated interval (exclusive).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]),
              default="text", show_default=True,
              help="text for people, json for machines, markdown for a pull-request comment.")
def diff(plans_given: tuple[str, ...], base: str | None, registry: Path | None,
         workloads: Path | None, plans: Path | None, journal: str | None,
         environment_journal: bool, journal_limit: int, interval_start: dt.datetime | None,
         interval_end: dt.datetime | None, fmt: str) -> None:
    """Show what changed between two plans, grouped by what each change means for deliveries.

    Classes: identity (a new delivery intent for the same windows), payload (new bytes and
    keys), planning (other children), execution_policy (same identity) and descriptive. Exit
    0 without a change, 1 with one, 2 on an error."""

    def body() -> int:
        if (interval_start is None) != (interval_end is None):
            raise invalid_argument("an estimate needs both --interval-start and --interval-end",
                          "Give both dates, or neither.")
        store = plans or (registry_defaults(registry)[2] if registry else DEFAULT_PLANS)
        with contextlib.ExitStack() as stack:
            if base is not None:
                if registry is None:
                    raise invalid_argument("--base compiles a registry: add --registry DIR",
                                  "e.g. `dpone plan diff --base origin/main --registry .`")
                from dpone.cli._git_ref import registry_at  # noqa: PLC0415 - with --base

                tree = stack.enter_context(registry_at(base, registry))
                pairs = _based(base, registry, tree, [Path(p) for p in plans_given],
                               workloads or registry / "workloads")
            else:
                if len(plans_given) != 2:
                    raise invalid_argument("name two plans: OLD NEW (or --base REF --registry DIR)",
                                  "e.g. `dpone plan diff goldens/plans/prod/orders.json "
                                  "workloads/orders.yaml --registry .`")
                pairs = [(_side(plans_given[0], registry, store),
                          _side(plans_given[1], registry, store), registry or Path())]
            comparisons = []
            for old, new, old_root in pairs:
                comparison = compare(old, new)
                if old is not None and comparison.changed:
                    comparison = _exposure(comparison, old, registry, journal,
                                           environment_journal, journal_limit)
                if (old is not None and new is not None and comparison.changed
                        and interval_start is not None and interval_end is not None):
                    from dpone.cli._plan_exposure import child_estimate  # noqa: PLC0415

                    estimate = child_estimate(old, new, old_root, registry or Path(),
                                              interval_start.date(), interval_end.date())
                    comparison = comparison.model_copy(update={"children": estimate})
                comparisons.append(comparison)
        document = diff_document(comparisons)
        if fmt == "json":
            emit_json(document)
        elif fmt == "markdown":
            click.echo(diff_markdown(document), nl=False)
        else:
            click.echo(diff_text(document))
        return 1 if document.changed else 0

    run_guarded("json" if fmt == "json" else "text", body, error_exit=2)
