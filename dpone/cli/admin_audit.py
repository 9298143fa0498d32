"""`dpone admin audit`: the environment's audit trail, exported (read-only).

Every audited decision the journal recorded for the environment, oldest first: each guarded
transition a run took (its lease holder as actor), each operator action (`operator_resume`,
`operator_reconcile`, `operator_prune`...), with the states, the revision, the digests the
decision was expected under and the artifact that proves it. `--operation-id` narrows it to one
delivery (with its children) or child, `--since` to the records at or after a journal time;
`--limit` bounds it (the document says when it was cut: continue with `--since`). `--format
json` writes one `dpone.audit_export.v1` document, `--format ndjson` one record a line for a
log pipeline or a SIEM. Nothing is written to the journal.
"""

from __future__ import annotations

import datetime as dt
import json

import click

from dpone.cli._environment import ControlPlane, resolve_control_plane
from dpone.cli._hints import redact
from dpone.cli._inputs import ControlPlaneArgs, close_quietly, control_plane_options, open_existing_journal
from dpone.cli._output import emit_json, run_guarded
from dpone.cli._table import text_table
from dpone.contracts import DponeError
from dpone.contracts.documents import AuditEntry, AuditExport
from dpone.contracts.journal import AuditRecord

DEFAULT_LIMIT = 10_000
MAX_LIMIT = 1_000_000


def _since(value: str | None) -> dt.datetime | None:
    """``--since``: an ISO-8601 date or instant (without an offset: UTC)."""
    if value is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError as error:
        raise DponeError(code="input.invalid_argument",
                         message=f"--since {value!r} is not an ISO-8601 date or time "
                         "(e.g. 2026-12-01 or 2026-12-01T08:00:00+00:00)") from error
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _entry(record: AuditRecord) -> AuditEntry:
    return AuditEntry(**record.model_dump())


def _document(records: list[AuditRecord], plane: ControlPlane, operation_id: str | None,
              since: dt.datetime | None, limit: int) -> AuditExport:
    return AuditExport(journal=redact(plane.journal), environment_id=plane.environment_id,
                       operation_id=operation_id, since=since, limit=limit,
                       truncated=len(records) > limit,
                       records=tuple(_entry(record) for record in records[:limit]))


def _text(document: AuditExport) -> str:
    scope = f" of {document.operation_id}" if document.operation_id else ""
    since = f" since {document.since.isoformat()}" if document.since else ""
    lines = [f"{len(document.records)} audit record(s){scope}{since} "
             f"(environment {document.environment_id})"]
    if document.records:
        header = ("at", "actor", "operation", "decision", "from -> to", "revision")
        rows = [(entry.at.isoformat(timespec="seconds"), entry.actor, entry.operation_id,
                 entry.transition_id, f"{entry.from_state or '-'} -> {entry.to_state or '-'}",
                 "-" if entry.revision is None else str(entry.revision))
                for entry in document.records]
        lines.append(text_table(header, rows, numeric=("revision",)))
    if document.truncated:
        last = document.records[-1].at.isoformat()
        lines.append(f"stopped at --limit {document.limit}: continue with --since {last} "
                     "(the records of that instant come again)")
    return "\n".join(lines)


@click.command("audit")
@control_plane_options()
@click.option("--operation-id", "operation_id", default=None, metavar="ID",
              help="Only this delivery (with its children) or child.")
@click.option("--since", "since_text", default=None, metavar="TIME",
              help="Only records at or after this journal time (ISO-8601; no offset: UTC).")
@click.option("--limit", type=click.IntRange(1, MAX_LIMIT), default=DEFAULT_LIMIT,
              show_default=True, help="At most this many records, oldest first.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "ndjson"]), default="text",
              show_default=True,
              help="text for people, json for one document, ndjson for one record a line.")
def audit(control: ControlPlaneArgs, operation_id: str | None, since_text: str | None,
          limit: int, fmt: str) -> None:
    """Export the environment's audit trail: actor, decision, states, digests (read-only)."""

    def body() -> int:
        since = _since(since_text)
        plane = resolve_control_plane(control)
        journal = open_existing_journal(plane.journal, environment_id=plane.environment_id)
        try:
            records = list(journal.list_audit(operation_id=operation_id, since=since,
                                              limit=limit + 1))
        finally:
            close_quietly(journal)
        document = _document(records, plane, operation_id, since, limit)
        if fmt == "ndjson":
            for entry in document.records:
                click.echo(json.dumps(entry.model_dump(mode="json", by_alias=True),
                                      sort_keys=True, ensure_ascii=False))
        elif fmt == "json":
            emit_json(document)
        else:
            click.echo(_text(document))
        return 0

    run_guarded("text" if fmt == "text" else "json", body)
