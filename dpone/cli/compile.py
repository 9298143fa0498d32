"""`dpone check`, and what `dpone plan` shares with it: offline compilation, no network and no
secrets, and the summary of what a workload compiles to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dpone.cli._hints import command
from dpone.cli._output import FORMAT_OPTION, emit_json, run_guarded
from dpone.compiler import CompiledPlan, compile_workload
from dpone.compiler.mapping_versions import check_mapping_layout, layout_digest, mapping_stores
from dpone.contracts.documents import (
    BindingSummary,
    CheckResult,
    CompileSummary,
    DigestSummary,
    FenceSummary,
    MutationSummary,
    ProfileSummary,
)
from dpone.contracts.plan import RestDeliveryPlan

WORKLOAD = click.argument("workload", type=click.Path(path_type=Path, dir_okay=False))
REGISTRY = click.option("--registry", "registry", required=True,
                         type=click.Path(path_type=Path, file_okay=False),
                         help="Registry root holding profiles/, bindings/, mappings/, environments/.")


def compile_checked(workload: Path, registry: Path, plans: Path | None = None) -> CompiledPlan:
    """Compile ``workload``; a mapping id whose layout changed since a plan in the registry's
    plan store (or ``plans``) or its goldens was compiled with it is refused."""
    compiled = compile_workload(workload, registry, workload_display=str(workload),
                                registry_display=str(registry))
    check_mapping_layout(compiled.plan, registry, mapping_stores(registry, plans),
                         registry_display=str(registry))
    return compiled


def _digests(compiled: CompiledPlan) -> DigestSummary:
    plan = compiled.plan
    return DigestSummary(
        plan=compiled.digest,
        operation_semantics=plan.profile.operation_semantics_digest,
        execution_policy=plan.profile.execution_policy_digest,
        profile_contract=plan.profile.profile_contract_digest,
        receiver_binding_semantics=plan.binding.receiver_binding_semantics_digest,
        operation_namespace=plan.environment.operation_namespace,
        effect_conflict_domain=plan.effect_conflict_domain,
        mapping=plan.mapping_digest,
        mapping_layout=layout_digest(plan.mapping.model_dump(mode="json", by_alias=True)),
    )


def _mutation(plan: RestDeliveryPlan) -> MutationSummary:
    """The mutation and the planner's rule for this plan (see docs/planner.md): how long
    windows may be, where that comes from, and the child budget."""
    limits = plan.effective_limits
    preferred = plan.workload.sink.delivery_overrides.preferred_window_days
    return MutationSummary(
        kind=plan.source_boundary.mutation_kind, scope_field=plan.source_boundary.scope_field,
        window_days=limits.window_days,
        window_days_from="workload" if preferred is not None else "profile_default",
        window_days_range=(limits.preferred_window_days.min, limits.preferred_window_days.max),
        max_children=limits.max_children)


def summary_fields(compiled: CompiledPlan) -> dict[str, Any]:
    """The fields of :class:`CompileSummary` (shared by the check and plan documents)."""
    plan = compiled.plan
    profile = plan.profile.snapshot
    body = profile.request.body.payload_format
    return {
        "workload": plan.logical_route_id,
        "files": tuple(compiled.checked_files),
        "profile": ProfileSummary(
            ref=plan.profile.ref, family=profile.protocol_family,
            request=f"{profile.request.method} {profile.request.path}",
            body=f"{profile.request.body.type} {body.format}"
                 + (f"+{body.compression}" if body.compression != "none" else "")),
        "binding": BindingSummary(ref=plan.binding.ref, authority=plan.binding.snapshot.authority,
                                  environment=plan.environment.ref,
                                  tier=plan.environment.snapshot.tier),
        "mutation": _mutation(plan),
        "fence": FenceSummary(type=plan.fence.type,
                              certified=plan.fence.certified_in_environment),
        "digests": _digests(compiled),
    }


_DAY_RULE = {"partition_replace": "a day is never split",
             "incremental_append": "a day over the planning limits is split into row parts"}
_WINDOW_FROM = {"workload": "workload preferred_window_days",
                "profile_default": "profile default preferred_window_days"}


def summary_text(summary: CompileSummary, header: str) -> str:
    p, b, m, f = summary.profile, summary.binding, summary.mutation, summary.fence
    rows = [
        header,
        f"  files        {', '.join(summary.files)}",
        f"  profile      {p.ref} ({p.family}: {p.request}, {p.body})",
        f"  binding      {b.ref} -> {b.authority} ({b.environment}, {b.tier})",
        f"  mutation     {m.kind} by {m.scope_field} ({_DAY_RULE[m.kind]})",
        f"  windows      up to {m.window_days} day(s) each ({_WINDOW_FROM[m.window_days_from]};"
        f" profile allows {m.window_days_range[0]}..{m.window_days_range[1]}),",
        "               shorter only where a planning limit or the boundary end forces it",
        f"  children     at most {m.max_children} per boundary (limits.max_children)",
        f"  fence        {f.type}"
        + (" (certified here)" if f.certified else " (not certified: no automatic resend)"),
        "  digests",
    ]
    digests = summary.digests.model_dump()
    width = max(len(k) for k in digests)
    rows += [f"    {k.ljust(width)}  {v}" for k, v in digests.items()]
    return "\n".join(rows)


@click.command()
@WORKLOAD
@REGISTRY
@FORMAT_OPTION
def check(workload: Path, registry: Path, fmt: str) -> None:
    """Validate WORKLOAD against the registry offline and show what it compiles to."""

    def body() -> int:
        compiled = compile_checked(workload, registry)
        result = CheckResult(**summary_fields(compiled))
        if fmt == "json":
            emit_json(result)
        else:
            click.echo(summary_text(result, f"ok: {workload} compiles"))
            click.echo("next: " + command("plan", str(workload), "--registry", str(registry)))
        return 0

    run_guarded(fmt, body)
