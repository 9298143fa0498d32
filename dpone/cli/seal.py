"""`dpone seal`: freeze one source boundary, plan its children and seal every payload."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._inputs import Progress, load_plan, parent_file
from dpone.cli._output import FORMAT_OPTION, emit_json, run_guarded
from dpone.codecs import PayloadEncodingError
from dpone.contracts import DponeError
from dpone.contracts.sealed import SealedTopology
from dpone.contracts.source_parent import SourceParent
from dpone.executor.seal import seal_all
from dpone.executor.source import freeze_source


def _summary(parent: SourceParent, topology: SealedTopology) -> dict[str, Any]:
    return {
        "parent_digest": topology.parent_digest,
        "plan_digest": topology.plan_digest,
        "parent_plan_digest": topology.parent_plan_digest,
        "boundary": {"from": parent.boundary.from_date.isoformat(),
                     "to": parent.boundary.to_date.isoformat()},
        "rows": topology.total_rows,
        "child_count": len(topology.children),
        "children": [
            {"ordinal": c.descriptor.ordinal,
             "scope": {"from": c.descriptor.scope_from.isoformat(),
                       "to": c.descriptor.scope_to.isoformat(),
                       "part": c.descriptor.part, "parts": c.descriptor.parts},
             "rows": c.descriptor.row_count,
             "decoded_bytes": c.descriptor.decoded_bytes,
             "wire_bytes": c.descriptor.wire_bytes,
             "payload_digest": c.payload.digest,
             "payload_key": c.payload.key,
             "document_key": c.document.key,
             "delivery_key": c.identities.delivery_key,
             "receiver_mutation_key": c.identities.receiver_mutation_key,
             "mutation_intent_digest": c.identities.mutation_intent_digest}
            for c in topology.children],
    }


def _text(summary: dict[str, Any]) -> str:
    header = ("ordinal", "scope", "rows", "decoded bytes", "wire bytes", "payload")
    rows = []
    for child in summary["children"]:
        scope = f"[{child['scope']['from']}, {child['scope']['to']})"
        if child["scope"]["parts"] > 1:
            scope += f" part {child['scope']['part']}/{child['scope']['parts']}"
        rows.append((str(child["ordinal"]), scope, str(child["rows"]),
                     str(child["decoded_bytes"]), str(child["wire_bytes"]),
                     child["payload_digest"][:19]))
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    numeric = {0, 2, 3, 4}

    def line(row: tuple[str, ...]) -> str:
        cells = [cell.rjust(w) if i in numeric else cell.ljust(w)
                 for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        return "  " + "  ".join(cells).rstrip()

    boundary = summary["boundary"]
    lines = [f"sealed [{boundary['from']}, {boundary['to']}): {summary['rows']} rows in "
             f"{summary['child_count']} child(ren)", line(header)]
    lines += [line(row) for row in rows]
    lines += [f"  parent              {summary['parent_digest']}",
              f"  plan                {summary['plan_digest']}",
              f"  parent_plan_digest  {summary['parent_plan_digest']}",
              f"  children            {summary['child_count']}"]
    return "\n".join(lines)


def _encoding_guard(action: Callable[[], int]) -> Callable[[], int]:
    def guarded() -> int:
        try:
            return action()
        except PayloadEncodingError as error:
            column = error.column if error.column is not None else "(schema)"
            raise DponeError(code="source.type_mismatch",
                             message=f"column {column!r}: {error.reason}",
                             details={"column": error.column, "row": error.row}) from error
    return guarded


@click.command()
@click.argument("target", metavar="WORKLOAD|PLAN_DIGEST")
@click.option("--registry", "registry", required=True,
              type=click.Path(path_type=Path, file_okay=False),
              help="Registry root holding profiles/, bindings/, mappings/, environments/ and "
                   "the file sources.")
@click.option("--interval-start", "interval_start", required=True,
              type=click.DateTime(formats=["%Y-%m-%d"]), help="First date of the boundary.")
@click.option("--interval-end", "interval_end", required=True,
              type=click.DateTime(formats=["%Y-%m-%d"]),
              help="End of the boundary (exclusive): [start, end).")
@click.option("--artifacts", "artifacts_url", default=".dpone/artifacts", show_default=True,
              help="Artifact store URL: a directory, file:///abs/path or s3://bucket/prefix.")
@click.option("--plans", "plans", type=click.Path(path_type=Path, file_okay=False),
              default=Path(".dpone"), show_default=True,
              help="Directory holding plans/sha256/<hex>.json (for a PLAN_DIGEST target).")
@FORMAT_OPTION
def seal(target: str, registry: Path, interval_start: dt.datetime, interval_end: dt.datetime,
         artifacts_url: str, plans: Path, fmt: str) -> None:
    """Freeze [--interval-start, --interval-end), plan its children and seal every payload.

    Publishes the parent, each payload and its dpone.rest_payload.v1 document create-if-absent;
    sealing the same boundary again publishes nothing new and prints the same digests.
    """

    def body() -> int:
        plan, plan_digest = load_plan(target, registry, plans)
        store = open_artifact_store(artifacts_url)
        parent = freeze_source(plan, registry_root=registry,
                               interval_start=interval_start.date(),
                               interval_end=interval_end.date(), artifacts=store)
        progress = Progress("sealing", "sealed child")
        try:
            with parent_file(store, parent) as path:
                topology = seal_all(plan, plan_digest, parent, path, store, progress=progress)
        finally:
            progress.close()
        summary = _summary(parent, topology)
        if fmt == "json":
            emit_json({"schema": "dpone.seal_result.v1", "status": "ok", **summary})
        else:
            click.echo(_text(summary))
        return 0

    run_guarded(fmt, _encoding_guard(body))


