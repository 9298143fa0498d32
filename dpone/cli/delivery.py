"""`dpone delivery inspect`: the journal's view of one delivery, read-only (`dpone delivery
resume` continues one: :mod:`dpone.cli.resume`).

``--operation-id`` takes a parent id (``op_v1_<hex>``) or a child id (``op_v1_<hex>_NNNN``).
The report shows every outcome axis per child, the checkpoint frontier, artifact ids, the
receipt's age and certified TTL horizon (when the plan is in the plan store), attempts, the
machine-readable allowed next actions, and what verification rests on: counters only, or
counters and a certified key echo in the poll answer. It never shows headers, credentials, payload rows or
response bodies: only journal facts and bounded receipt scalars.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from dpone.cli._causes import likely_cause
from dpone.cli._inputs import (
    close_quietly,
    journal_options,
    load_delivery,
    open_existing_journal,
    parse_operation_id,
    stored_plan,
)
from dpone.cli._output import FORMAT_OPTION, emit_json, run_guarded
from dpone.cli._report import child_rows, render_table
from dpone.cli._verification_basis import verification_basis, verification_text
from dpone.cli.delivery_list import list_command
from dpone.cli.resume import resume_command
from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation, DeliveryJournalView, ParentOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.seal import payload_filename
from dpone.executor.supervisor import allowed_actions, finished

MAX_SHOWN_OBSERVATIONS = 8


def _plan(plans: Path, digest: str) -> RestDeliveryPlan | None:
    try:
        return stored_plan(plans, digest)
    except (DponeError, ValueError):
        return None


def _receipt_clock(child: ChildOperation, attempts: Sequence[Mapping[str, Any]],
                   now: dt.datetime, ttl_s: int | None) -> dict[str, Any]:
    """Age of the receipt (from the attempt that recorded it) and its certified TTL horizon;
    nothing when the receiver gave no receipt id (a refusal records only its HTTP status)."""
    if not child.receipt or child.receipt.get("id") is None:
        return {}
    recorded = [a["outcome_at"] for a in attempts if a.get("outcome_at") is not None]
    if not recorded:
        return {}
    at = max(recorded)
    clock: dict[str, Any] = {"receipt_recorded_at": at.isoformat(),
                             "receipt_age_s": int((now - at).total_seconds())}
    if ttl_s is not None:
        clock["receipt_ttl_horizon"] = (at + dt.timedelta(seconds=ttl_s)).isoformat()
    return clock


def _document(journal: DeliveryJournalView, parent: ParentOperation, only: str | None,
              plan: RestDeliveryPlan | None) -> dict[str, Any]:
    now = journal.now()
    ttl = plan.profile.snapshot.timeouts.receipt_ttl_s if plan is not None else None
    by_id = {child.operation_id: child for child in parent.children}
    rows = []
    for row in child_rows(parent):
        if only is not None and row["operation_id"] != only:
            continue
        child = by_id[row["operation_id"]]
        row["receiver_mutation_key"] = child.receiver_mutation_key
        if plan is not None:
            row["payload_filename"] = payload_filename(plan, child.receiver_mutation_key)
        row["allowed_actions"] = list(allowed_actions(child))
        attempts = journal.list_attempts(child.operation_id)
        row["attempts"] = [{"attempt_ordinal": a["attempt_ordinal"], "marker_key": a["marker_key"],
                            "outcome": a.get("outcome"),
                            "started_at": a["started_at"].isoformat()}
                           for a in attempts]
        observations = journal.list_observations(child.operation_id)
        row["observations_total"] = len(observations)
        row["observations"] = [{"observation_ordinal": o["observation_ordinal"],
                                "transition_id": o["transition_id"],
                                "observed_at": o["observed_at"].isoformat(),
                                "document": o["document"]}
                               for o in observations[-MAX_SHOWN_OBSERVATIONS:]]
        row.update(_receipt_clock(child, attempts, now, ttl))
        row.update(likely_cause(child, attempts))
        rows.append(row)
    pending = [child for child in sorted(parent.children, key=lambda c: c.ordinal)
               if not finished(child)]
    document: dict[str, Any] = {
        "schema": "dpone.delivery_inspection.v1",
        "parent_id": parent.parent_id, "logical_route_id": parent.logical_route_id,
        "plan_digest": parent.plan_digest, "parent_plan_digest": parent.parent_plan_digest,
        "mutation_kind": parent.mutation_kind,
        "generation": parent.generation.model_dump(mode="json"),
        "boundary": {"from": parent.boundary_from.isoformat(),
                     "to": parent.boundary_to.isoformat()},
        "checkpoint_frontier": parent.checkpoint_frontier,
        "children_total": len(parent.children),
        "complete": not pending,
        "next_actions": list(allowed_actions(pending[0])) if pending else [],
        "journal_now": now.isoformat(),
        "children": rows,
    }
    if plan is not None:
        document["profile"] = plan.profile.snapshot.ref
        document["authority"] = plan.binding.snapshot.authority
    document["verification"] = verification_basis(plan)
    return document


def _keys_text(children: list[dict[str, Any]]) -> list[str]:
    """Each child's keys as the receiver sees them: what an operator searches its console for."""
    lines = ["keys (as the receiver sees them):"]
    for child in children:
        lines += [f"  child {child['ordinal']}  delivery_key           {child['delivery_key']}",
                  f"  {' ' * len(str(child['ordinal']))}        receiver_mutation_key  "
                  f"{child['receiver_mutation_key']}"]
        if child.get("payload_filename"):
            lines.append(f"  {' ' * len(str(child['ordinal']))}        payload_filename       "
                         f"{child['payload_filename']}")
    return [*lines, ""]


def _text(document: dict[str, Any]) -> str:
    lines = [f"delivery {document['parent_id']}",
             f"  route {document['logical_route_id']}  {document['mutation_kind']}  boundary "
             f"[{document['boundary']['from']}, {document['boundary']['to']})",
             f"  frontier {document['checkpoint_frontier']}/{document['children_total']}"
             + ("  complete" if document["complete"] else ""),
             f"  plan {document['plan_digest']}"]
    if "profile" in document:
        lines.append(f"  profile {document['profile']} -> {document['authority']}")
    lines.append(verification_text(document["verification"]))
    lines += ["", render_table(document["children"]), ""]
    lines += _keys_text(document["children"])
    for child in document["children"]:
        if child["last_error_code"] or child["allowed_actions"]:
            detail = [f"  child {child['ordinal']} {child['operation_id']}"]
            if child["last_error_code"]:
                detail.append(f"    error {child['last_error_code']}")
            if "likely_cause" in child:
                detail.append(f"    likely cause: {child['likely_cause']['summary']}")
            if child["observations_total"]:
                last = child["observations"][-1]
                detail.append(f"    {child['observations_total']} observation(s), last "
                              f"{last['transition_id']} at {last['observed_at']}")
            if "receipt_age_s" in child:
                detail.append(f"    receipt age {child['receipt_age_s']} s"
                              + (f", certified until {child['receipt_ttl_horizon']}"
                                 if "receipt_ttl_horizon" in child else ""))
            detail.append(f"    payload {child['payload_key']}")
            detail.append(f"    allowed next actions: {', '.join(child['allowed_actions'])}")
            lines += detail
    lines.append(f"next actions: {', '.join(document['next_actions']) or 'none (complete)'}")
    return "\n".join(lines)


@click.group()
def delivery() -> None:
    """List and inspect (read-only) and resume deliveries recorded in the journal."""


@delivery.command()
@journal_options("Plan store, for the profile's certified receipt TTL.")
@FORMAT_OPTION
def inspect(operation_id: str, environment_id: str, journal_url: str, plans: Path,
            fmt: str) -> None:
    """Show every axis, the frontier, artifact ids, receipt age and allowed next actions."""

    def body() -> int:
        parent_id, only = parse_operation_id(operation_id)
        journal = open_existing_journal(journal_url, environment_id=environment_id)
        try:
            parent = load_delivery(journal, parent_id, only)
            document = _document(journal, parent, only, _plan(plans, parent.plan_digest))
        finally:
            close_quietly(journal)
        if fmt == "json":
            emit_json(document)
        else:
            click.echo(_text(document))
        return 0

    run_guarded(fmt, body)


delivery.add_command(resume_command)
delivery.add_command(list_command)
