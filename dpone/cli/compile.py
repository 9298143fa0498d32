"""`dpone check` and `dpone plan`: offline compilation, no network and no secrets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dpone.cli._hints import command
from dpone.cli._output import FORMAT_OPTION, emit_json, run_guarded
from dpone.compiler import CompiledPlan, compile_workload
from dpone.plans import write_plan

_WORKLOAD = click.argument("workload", type=click.Path(path_type=Path, dir_okay=False))
_REGISTRY = click.option("--registry", "registry", required=True,
                         type=click.Path(path_type=Path, file_okay=False),
                         help="Registry root holding profiles/, bindings/, mappings/, environments/.")


def _compile(workload: Path, registry: Path) -> CompiledPlan:
    return compile_workload(workload, registry, workload_display=str(workload),
                            registry_display=str(registry))


def _digests(compiled: CompiledPlan) -> dict[str, str]:
    plan = compiled.plan
    return {
        "plan": compiled.digest,
        "operation_semantics": plan.profile.operation_semantics_digest,
        "execution_policy": plan.profile.execution_policy_digest,
        "profile_contract": plan.profile.profile_contract_digest,
        "receiver_binding_semantics": plan.binding.receiver_binding_semantics_digest,
        "operation_namespace": plan.environment.operation_namespace,
        "effect_conflict_domain": plan.effect_conflict_domain,
    }


def _summary(compiled: CompiledPlan) -> dict[str, Any]:
    plan = compiled.plan
    profile = plan.profile.snapshot
    body = profile.request.body.payload_format
    return {
        "workload": plan.logical_route_id,
        "files": list(compiled.checked_files),
        "profile": {"ref": plan.profile.ref, "family": profile.protocol_family,
                    "request": f"{profile.request.method} {profile.request.path}",
                    "body": f"{profile.request.body.type} {body.format}"
                            + (f"+{body.compression}" if body.compression != "none" else "")},
        "binding": {"ref": plan.binding.ref, "authority": plan.binding.snapshot.authority,
                    "environment": plan.environment.ref,
                    "tier": plan.environment.snapshot.tier},
        "mutation": {"kind": plan.source_boundary.mutation_kind,
                     "scope_field": plan.source_boundary.scope_field,
                     "window_days": plan.effective_limits.window_days},
        "fence": {"type": plan.fence.type, "certified": plan.fence.certified_in_environment},
        "digests": _digests(compiled),
    }


def _text(summary: dict[str, Any], header: str) -> str:
    p, b, m, f = summary["profile"], summary["binding"], summary["mutation"], summary["fence"]
    rows = [
        header,
        f"  files        {', '.join(summary['files'])}",
        f"  profile      {p['ref']} ({p['family']}: {p['request']}, {p['body']})",
        f"  binding      {b['ref']} -> {b['authority']} ({b['environment']}, {b['tier']})",
        f"  mutation     {m['kind']} by {m['scope_field']}, windows of {m['window_days']} day(s)",
        f"  fence        {f['type']}"
        + (" (certified here)" if f["certified"] else " (not certified: no automatic resend)"),
        "  digests",
    ]
    width = max(len(k) for k in summary["digests"])
    rows += [f"    {k.ljust(width)}  {v}" for k, v in summary["digests"].items()]
    return "\n".join(rows)


@click.command()
@_WORKLOAD
@_REGISTRY
@FORMAT_OPTION
def check(workload: Path, registry: Path, fmt: str) -> None:
    """Validate WORKLOAD against the registry offline and show what it compiles to."""

    def body() -> int:
        compiled = _compile(workload, registry)
        summary = _summary(compiled)
        if fmt == "json":
            emit_json({"schema": "dpone.check_result.v1", "status": "ok", **summary})
        else:
            click.echo(_text(summary, f"ok: {workload} compiles"))
            click.echo("next: " + command("plan", str(workload), "--registry", str(registry)))
        return 0

    run_guarded(fmt, body)


@click.command()
@_WORKLOAD
@_REGISTRY
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False),
              default=Path(".dpone"), show_default=True,
              help="Directory under which plans/sha256/<hex>.json is written.")
@FORMAT_OPTION
def plan(workload: Path, registry: Path, out: Path, fmt: str) -> None:
    """Compile WORKLOAD into a content-addressed dpone.rest_delivery_plan.v1."""

    def body() -> int:
        compiled = _compile(workload, registry)
        path, written = write_plan(out, compiled.digest, compiled.canonical)
        summary = _summary(compiled)
        if fmt == "json":
            emit_json({"schema": "dpone.plan_result.v1", "status": "ok", "path": str(path),
                       "written": written, "plan_digest": compiled.digest, **summary})
        else:
            click.echo(_text(summary, f"plan {compiled.digest}"))
            state = "written" if written else "unchanged (same digest, same bytes)"
            click.echo(f"  file         {path} ({state})")
        return 0

    run_guarded(fmt, body)
