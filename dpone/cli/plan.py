"""`dpone plan`: compile a workload into its plan (the default), every workload of a registry
into its golden plan (``--all``), or compare two plans (`dpone plan diff`).

``dpone plan WORKLOAD --registry DIR`` is ``dpone plan compile WORKLOAD --registry DIR``: the
group passes any first argument that is not one of its commands to ``compile``.
"""

from __future__ import annotations

from pathlib import Path

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._hints import command, redact
from dpone.cli._inputs import DEFAULT_ARTIFACTS, DEFAULT_PLANS
from dpone.cli._lazy import LazyGroup
from dpone.cli._output import FORMAT_OPTION, emit_json, invalid_argument, run_guarded
from dpone.cli._plan_render import comparison_text
from dpone.cli.compile import (
    REGISTRY,
    compile_checked,
    summary_fields,
    summary_text,
)
from dpone.compiler import CompiledPlan
from dpone.contracts.documents import PlanResult, PlanSet, PublishedPlan
from dpone.plans import publish_plan, write_plan

DEFAULT_COMMAND = "compile"
DIFF_SUMMARY = ("Show what changed between two plans, grouped by what each change means for "
                "deliveries.")


class PlanGroup(LazyGroup):
    """A group whose first argument, when not one of its commands, goes to ``compile``."""

    default_command = DEFAULT_COMMAND

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ctx.help_option_names):
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[compile] WORKLOAD --registry DIR [OPTIONS]")
        formatter.write_usage(ctx.command_path, "--all --registry DIR (--out DIR | --check DIR)")
        formatter.write_usage(ctx.command_path, "diff OLD NEW | diff --base REF --registry DIR")


@click.group(cls=PlanGroup, context_settings={"help_option_names": ["-h", "--help"]})
def plan() -> None:
    """Compile workloads into content-addressed plans and goldens, or diff two plans.

    `dpone plan WORKLOAD --registry DIR` compiles one workload (the `compile` command);
    `dpone plan --all --registry DIR --out goldens/plans` writes the reviewed golden plan of
    every workload and `--check goldens/plans` fails when one is stale; `dpone plan diff`
    shows what a change means for deliveries.
    """


def _publish(artifacts_url: str, compiled: CompiledPlan) -> PublishedPlan:
    """Publish the plan into the artifact store by its digest (create-if-absent)."""
    ref = publish_plan(open_artifact_store(artifacts_url), compiled.digest, compiled.canonical)
    return PublishedPlan(artifacts=redact(artifacts_url), key=ref.key)


def _one(workload: Path, registry: Path, out: Path | None, publish: bool,
         artifacts_url: str | None, fmt: str) -> int:
    if artifacts_url is not None and not publish:
        raise invalid_argument("--artifacts names where --publish publishes the plan",
                      "Add --publish to publish the plan into that artifact store.")
    store = out or registry / DEFAULT_PLANS
    compiled = compile_checked(workload, registry, store)
    path, written = write_plan(store, compiled.digest, compiled.canonical)
    published = _publish(artifacts_url or str(registry / DEFAULT_ARTIFACTS),
                         compiled) if publish else None
    result = PlanResult(path=str(path), written=written, plan_digest=compiled.digest,
                        published=published, **summary_fields(compiled))
    if fmt == "json":
        emit_json(result)
        return 0
    click.echo(summary_text(result, f"plan {compiled.digest}"))
    state = "written" if written else "unchanged (same digest, same bytes)"
    click.echo(f"  file         {path} ({state})")
    if published is not None:
        click.echo(f"  published    {published.key} in {published.artifacts}")
        click.echo("next: dpone-executor run --plan-digest " + compiled.digest
                   + " --interval-start YYYY-MM-DD --interval-end YYYY-MM-DD "
                   "--environment NAME")
    return 0


_STATE = {"written": "written", "unchanged": "unchanged", "stale": "STALE",
          "missing": "MISSING", "extra": "EXTRA"}


def _set_text(result: PlanSet, registry: Path, workloads: Path | None) -> str:
    lines = []
    if result.mode == "check":
        for entry in result.plans:
            if entry.diff is not None:
                lines += [*comparison_text(entry.diff), ""]
    width = max((len(e.path) for e in result.plans), default=0)
    lines += [f"goldens in {result.directory}: {len(result.plans)} plan(s)"]
    lines += [f"  {e.path.ljust(width)}  {_STATE[e.state]}"
              + (" (removed: no workload compiles to it)" if result.mode == "write"
                 and e.state == "extra" else "")
              for e in result.plans]
    rewrite = command("plan", "--all", "--registry", str(registry),
                      *(["--workloads", str(workloads)] if workloads is not None else []),
                      "--out", result.directory)
    if result.mode == "check" and result.stale:
        lines.append(f"{result.stale} golden(s) differ from what the registry compiles to: "
                     f"review the changes above, then `{rewrite}` and commit the goldens")
    elif result.mode == "check":
        lines.append("every golden is current")
    else:
        lines.append(f"next: review `git diff {result.directory}`, or "
                     f"`dpone plan diff --base HEAD --registry {registry}`")
    return "\n".join(lines)


def _all(registry: Path, workloads: Path | None, out: Path | None, check: Path | None,
         fmt: str) -> int:
    from dpone.cli._plan_all import (  # noqa: PLC0415 - only with --all
        check_goldens,
        compile_all,
        workload_files,
    )

    if (out is None) == (check is None):
        raise invalid_argument("--all needs one of --out DIR (write the goldens) or --check DIR",
                      "Write them with `--out goldens/plans`, or fail on a stale one with "
                      "`--check goldens/plans`.")
    compiled = compile_all(registry, workload_files(workloads or registry / "workloads"))
    if check is not None:
        result = check_goldens(check, compiled)
    else:
        from dpone.cli._plan_all import write_goldens  # noqa: PLC0415 - only with --out

        result = write_goldens(out or Path(), compiled)
    if fmt == "json":
        emit_json(result)
    else:
        click.echo(_set_text(result, registry, workloads))
    return 1 if result.stale else 0


@plan.command(name=DEFAULT_COMMAND)
@click.argument("workload", required=False, type=click.Path(path_type=Path, dir_okay=False))
@REGISTRY
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False),
              default=None, show_default=f"<registry>/{DEFAULT_PLANS}",
              help="Directory under which plans/sha256/<hex>.json is written; with --all, the "
                   "directory of golden plans (<environment>/<workload>.json).")
@click.option("--publish", "publish", is_flag=True, default=False,
              help="Also publish the plan into the artifact store --artifacts by its digest "
                   "(create-if-absent): what `dpone-executor run --plan-digest` reads.")
@click.option("--artifacts", "artifacts_url", default=None,
              show_default=f"<registry>/{DEFAULT_ARTIFACTS}",
              help="Artifact store --publish publishes into: a directory, file:///abs/path or "
                   "s3://bucket/prefix.")
@click.option("--all", "every", is_flag=True, default=False,
              help="Compile every workload under --workloads into its golden plan: written "
                   "to --out DIR, or compared with --check DIR.")
@click.option("--check", "check", type=click.Path(path_type=Path, file_okay=False),
              default=None,
              help="With --all: write nothing; exit 1 naming each golden under DIR that "
                   "differs from what the registry compiles to, with the semantic diff.")
@click.option("--workloads", "workloads", type=click.Path(path_type=Path, file_okay=False),
              default=None, show_default="<registry>/workloads",
              help="With --all: the directory searched (recursively) for workload files.")
@FORMAT_OPTION
def compile_command(workload: Path | None, registry: Path, out: Path | None, publish: bool,
                    artifacts_url: str | None, every: bool, check: Path | None,
                    workloads: Path | None, fmt: str) -> None:
    """Compile WORKLOAD into a content-addressed dpone.rest_delivery_plan.v1.

    With --publish the plan is also published into the artifact store by its digest (the CI
    step that makes a plan deployable: the executor image runs only a published plan). With
    --all every workload of the registry is compiled into its golden plan instead (exit 1 with
    --check when a golden is stale)."""

    def body() -> int:
        if every:
            if workload is not None or publish:
                raise invalid_argument("--all compiles every workload: name no WORKLOAD and no --publish",
                              "Drop WORKLOAD (or --all) from the command.")
            return _all(registry, workloads, out, check, fmt)
        if check is not None or workloads is not None:
            raise invalid_argument("--check and --workloads go with --all",
                          "Add --all to compile every workload of the registry.")
        if workload is None:
            raise invalid_argument("name the WORKLOAD to compile, or --all for every workload",
                          "e.g. `dpone plan workloads/orders.yaml --registry .`")
        return _one(workload, registry, out, publish, artifacts_url, fmt)

    run_guarded(fmt, body, error_exit=2 if check is not None else None)


plan.add_lazy("diff", "dpone.cli.plan_diff:diff", DIFF_SUMMARY)
