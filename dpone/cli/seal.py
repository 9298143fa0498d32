"""`dpone seal`: freeze one source boundary, plan its children and seal every payload."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._environment import registry_defaults, run_control_plane
from dpone.cli._hints import command
from dpone.cli._inputs import boundary_options, load_plan, sealed_boundary
from dpone.cli._output import FORMAT_OPTION, emit_json, run_guarded
from dpone.cli._seal_log import changed_since_seal
from dpone.cli._table import summarized
from dpone.contracts.documents import Interval, SealedChildSummary, SealedScope, SealResult
from dpone.contracts.sealed import SealedTopology
from dpone.contracts.source_parent import SourceParent


def _result(parent: SourceParent, topology: SealedTopology) -> SealResult:
    return SealResult(
        parent_digest=topology.parent_digest,
        plan_digest=topology.plan_digest,
        parent_plan_digest=topology.parent_plan_digest,
        boundary=Interval.of(parent.boundary.from_date, parent.boundary.to_date),
        rows=topology.total_rows,
        child_count=len(topology.children),
        children=tuple(
            SealedChildSummary(
                ordinal=c.descriptor.ordinal,
                scope=SealedScope(from_date=c.descriptor.scope_from,
                                  to_date=c.descriptor.scope_to,
                                  part=c.descriptor.part, parts=c.descriptor.parts),
                rows=c.descriptor.row_count,
                decoded_bytes=c.descriptor.decoded_bytes,
                wire_bytes=c.descriptor.wire_bytes,
                payload_digest=c.payload.digest,
                payload_key=c.payload.key,
                document_key=c.document.key,
                delivery_key=c.identities.delivery_key,
                receiver_mutation_key=c.identities.receiver_mutation_key,
                mutation_intent_digest=c.identities.mutation_intent_digest)
            for c in topology.children),
    )


def _text(result: SealResult, show_all: bool = False) -> str:
    header = ("ordinal", "scope", "rows", "decoded bytes", "wire bytes", "payload")
    rows = []
    for child in result.children:
        scope = f"[{child.scope.from_date}, {child.scope.to_date})"
        if child.scope.parts > 1:
            scope += f" part {child.scope.part}/{child.scope.parts}"
        rows.append((str(child.ordinal), scope, str(child.rows), str(child.decoded_bytes),
                     str(child.wire_bytes), child.payload_digest[:19]))
    lines = [f"sealed {result.boundary.render()}: {result.rows} rows in "
             f"{result.child_count} child(ren)",
             summarized(header, rows, {"ordinal", "rows", "decoded bytes", "wire bytes"},
                        show_all=show_all,
                        how="--all shows every one; --format json lists them all",
                        total=("total", f"{result.child_count} children", str(result.rows),
                               str(sum(c.decoded_bytes for c in result.children)),
                               str(sum(c.wire_bytes for c in result.children)), ""))]
    lines += [f"  parent              {result.parent_digest}",
              f"  plan                {result.plan_digest}",
              f"  parent_plan_digest  {result.parent_plan_digest}",
              f"  children            {result.child_count}"]
    return "\n".join(lines)


@click.command()
@boundary_options
@click.option("--all", "show_all", is_flag=True, default=False,
              help="Show every child in the table (beyond 50 the text shows the first and last "
                   "25 and counts the rest).")
@FORMAT_OPTION
def seal(target: str, registry: Path, interval_start: dt.datetime, interval_end: dt.datetime,
         artifacts_url: str | None, plans: Path | None, show_all: bool, fmt: str) -> None:
    """Freeze [--interval-start, --interval-end), plan its children and seal every payload.

    Publishes the parent, each payload and its dpone.rest_payload.v1 document create-if-absent;
    sealing the same boundary again publishes nothing new and prints the same digests. The
    artifact store is --artifacts, else the one the environment file's control_plane names,
    else <registry>/.dpone/artifacts: the store `dpone deliver` of the same registry uses.
    """

    def body() -> int:
        plan, plan_digest = load_plan(target, registry, plans or registry_defaults(registry)[2])
        plane = run_control_plane(registry, plan.environment.ref, journal=None,
                                  artifacts=artifacts_url, plans=plans)
        store = open_artifact_store(plane.artifacts)
        sealed = sealed_boundary(plan, plan_digest, registry, interval_start.date(),
                                 interval_end.date(), store)
        changed_since_seal(store, sealed.topology, "`dpone deliver` sends the bytes sealed now")
        result = _result(sealed.parent, sealed.topology)
        if fmt == "json":
            emit_json(result)
        else:
            click.echo(_text(result, show_all))
            given = [*(["--artifacts", artifacts_url] if artifacts_url is not None else []),
                     *(["--plans", str(plans)] if plans is not None else [])]
            click.echo("next: " + command(
                "deliver", target, "--registry", str(registry), "--interval-start",
                f"{interval_start:%Y-%m-%d}", "--interval-end", f"{interval_end:%Y-%m-%d}",
                *given))
        return 0

    run_guarded(fmt, body)
