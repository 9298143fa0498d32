"""`dpone check` and `dpone plan`: offline compilation, no network and no secrets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._hints import command, redact
from dpone.cli._inputs import DEFAULT_ARTIFACTS, DEFAULT_PLANS
from dpone.cli._output import FORMAT_OPTION, emit_json, run_guarded
from dpone.compiler import CompiledPlan, compile_workload
from dpone.compiler.mapping_versions import check_mapping_layout, layout_digest, mapping_stores
from dpone.contracts import DponeError
from dpone.contracts.documents import (
    BindingSummary,
    CheckResult,
    CompileSummary,
    DigestSummary,
    FenceSummary,
    MutationSummary,
    PlanResult,
    ProfileSummary,
    PublishedPlan,
)
from dpone.contracts.plan import RestDeliveryPlan
from dpone.plans import publish_plan, write_plan

_WORKLOAD = click.argument("workload", type=click.Path(path_type=Path, dir_okay=False))
_REGISTRY = click.option("--registry", "registry", required=True,
                         type=click.Path(path_type=Path, file_okay=False),
                         help="Registry root holding profiles/, bindings/, mappings/, environments/.")


def _compile(workload: Path, registry: Path, plans: Path | None = None) -> CompiledPlan:
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


def _summary(compiled: CompiledPlan) -> dict[str, Any]:
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


def _text(summary: CompileSummary, header: str) -> str:
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
@_WORKLOAD
@_REGISTRY
@FORMAT_OPTION
def check(workload: Path, registry: Path, fmt: str) -> None:
    """Validate WORKLOAD against the registry offline and show what it compiles to."""

    def body() -> int:
        compiled = _compile(workload, registry)
        result = CheckResult(**_summary(compiled))
        if fmt == "json":
            emit_json(result)
        else:
            click.echo(_text(result, f"ok: {workload} compiles"))
            click.echo("next: " + command("plan", str(workload), "--registry", str(registry)))
        return 0

    run_guarded(fmt, body)


def _publish(artifacts_url: str, compiled: CompiledPlan) -> PublishedPlan:
    """Publish the plan into the artifact store by its digest (create-if-absent)."""
    ref = publish_plan(open_artifact_store(artifacts_url), compiled.digest, compiled.canonical)
    return PublishedPlan(artifacts=redact(artifacts_url), key=ref.key)


@click.command()
@_WORKLOAD
@_REGISTRY
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False),
              default=None, show_default=f"<registry>/{DEFAULT_PLANS}",
              help="Directory under which plans/sha256/<hex>.json is written.")
@click.option("--publish", "publish", is_flag=True, default=False,
              help="Also publish the plan into the artifact store --artifacts by its digest "
                   "(create-if-absent): what `dpone-executor run --plan-digest` reads.")
@click.option("--artifacts", "artifacts_url", default=None,
              show_default=f"<registry>/{DEFAULT_ARTIFACTS}",
              help="Artifact store --publish publishes into: a directory, file:///abs/path or "
                   "s3://bucket/prefix.")
@FORMAT_OPTION
def plan(workload: Path, registry: Path, out: Path | None, publish: bool,
         artifacts_url: str | None, fmt: str) -> None:
    """Compile WORKLOAD into a content-addressed dpone.rest_delivery_plan.v1.

    With --publish the plan is also published into the artifact store by its digest (the CI
    step that makes a plan deployable: the executor image runs only a published plan)."""

    def body() -> int:
        if artifacts_url is not None and not publish:
            raise DponeError(code="input.invalid_argument",
                             message="--artifacts names where --publish publishes the plan",
                             hint="Add --publish to publish the plan into that artifact store.")
        store = out or registry / DEFAULT_PLANS
        compiled = _compile(workload, registry, store)
        path, written = write_plan(store, compiled.digest, compiled.canonical)
        published = _publish(artifacts_url or str(registry / DEFAULT_ARTIFACTS),
                             compiled) if publish else None
        result = PlanResult(path=str(path), written=written, plan_digest=compiled.digest,
                            published=published, **_summary(compiled))
        if fmt == "json":
            emit_json(result)
        else:
            click.echo(_text(result, f"plan {compiled.digest}"))
            state = "written" if written else "unchanged (same digest, same bytes)"
            click.echo(f"  file         {path} ({state})")
            if published is not None:
                click.echo(f"  published    {published.key} in {published.artifacts}")
                click.echo("next: dpone-executor run --plan-digest " + compiled.digest
                           + " --interval-start YYYY-MM-DD --interval-end YYYY-MM-DD "
                           "--environment NAME")
        return 0

    run_guarded(fmt, body)
