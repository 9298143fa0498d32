"""`dpone delivery inspect`: the journal's view of one delivery, read-only (`dpone delivery
resume` continues one: :mod:`dpone.cli.delivery.resume`).

``--operation-id`` takes a parent id (``op_v1_<hex>``) or a child id (``op_v1_<hex>_NNNN``).
The report shows every outcome axis per child, the checkpoint frontier, artifact ids, the
receipt's age and certified TTL horizon (when the plan is in the plan store or published in the
artifact store), attempts, the machine-readable allowed next actions, what verification rests
on (counters only, or counters and a certified key echo in the poll answer), and the audit
trail: every operator action recorded on the delivery and its children. It never shows
headers, credentials, payload rows or response bodies: only journal facts and bounded receipt
scalars.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from typing import Any

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._environment import ControlPlane, resolve_control_plane
from dpone.cli._hints import ProofWays, reconcile_lines
from dpone.cli._inputs import (
    ControlPlaneArgs,
    close_quietly,
    journal_options,
    load_delivery,
    open_existing_journal,
    parse_operation_id,
    recovery_plan,
)
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.cli._table import text_table
from dpone.cli.delivery._causes import likely_cause
from dpone.cli.delivery._report import child_rows, render_table
from dpone.cli.delivery._verification_basis import verification_basis, verification_text
from dpone.contracts import DponeError
from dpone.contracts.documents import (
    AttemptSummary,
    ChildRow,
    DeliveryInspection,
    HeldLease,
    InspectedChild,
    Interval,
    ObservationSummary,
    OperatorActionSummary,
)
from dpone.contracts.journal import ChildOperation, DeliveryJournalView, ParentOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.executor.supervisor import allowed_actions, finished

MAX_SHOWN_OBSERVATIONS = 8


def _plan(plane: ControlPlane, digest: str) -> RestDeliveryPlan | None:
    """The plan from the plan store, else as published in the artifact store; None when
    neither gives a verified copy (inspection then shows journal facts only)."""
    try:
        return recovery_plan(plane.plans, open_artifact_store(plane.artifacts), digest)
    except (DponeError, ValueError):
        return None


def _actions(journal: DeliveryJournalView, parent: ParentOperation,
             only: str | None) -> tuple[OperatorActionSummary, ...]:
    """The audit trail of the delivery and its children (of ``only`` when one is named)."""
    ids = [parent.parent_id, *(c.operation_id for c in parent.children
                               if only is None or c.operation_id == only)]
    return tuple(OperatorActionSummary(
        audit_id=a.audit_id, operation_id=a.operation_id, command=a.command, actor=a.actor,
        at=a.at, before_revision=a.before_revision, after_revision=a.after_revision,
        from_state=a.from_state, to_state=a.to_state, evidence_digest=a.evidence_digest,
        reconciliation_id=a.reconciliation_id) for a in journal.list_operator_actions(ids))


def _receipt_clock(child: ChildOperation, attempts: Sequence[Mapping[str, Any]],
                   now: dt.datetime, ttl_s: int | None) -> dict[str, Any]:
    """Age of the receipt (from the attempt that recorded it) and its certified TTL horizon:
    the receipt clock fields of :class:`InspectedChild` that apply; nothing when the receiver
    gave no receipt id (a refusal records only its HTTP status)."""
    if not child.receipt or child.receipt.get("id") is None:
        return {}
    recorded = [a["outcome_at"] for a in attempts if a.get("outcome_at") is not None]
    if not recorded:
        return {}
    at = max(recorded)
    clock: dict[str, Any] = {"receipt_recorded_at": at,
                             "receipt_age_s": int((now - at).total_seconds())}
    if ttl_s is not None:
        clock["receipt_ttl_horizon"] = at + dt.timedelta(seconds=ttl_s)
    return clock


def _payload_filename(plan: RestDeliveryPlan, child: ChildOperation) -> str | None:
    """The filename the child's payload is sent under; only a multipart body has one, and only
    then is the sealer (with its codecs) imported."""
    if plan.profile.snapshot.request.body.type != "multipart_file":
        return None
    from dpone.executor.seal import payload_filename  # noqa: PLC0415 - see the docstring

    return payload_filename(plan, child.receiver_mutation_key)


def _child(journal: DeliveryJournalView, child: ChildOperation, row: ChildRow, now: dt.datetime,
           plan: RestDeliveryPlan | None) -> InspectedChild:
    ttl = plan.profile.snapshot.timeouts.receipt_ttl_s if plan is not None else None
    attempts = journal.list_attempts(child.operation_id)
    observations = journal.list_observations(child.operation_id)
    optional: dict[str, Any] = _receipt_clock(child, attempts, now, ttl)
    if plan is not None:
        optional["payload_filename"] = _payload_filename(plan, child)
    cause = likely_cause(child, attempts)
    if cause is not None:
        optional["likely_cause"] = cause
    return InspectedChild(
        **dict(row),
        receiver_mutation_key=child.receiver_mutation_key,
        allowed_actions=allowed_actions(child),
        attempts=tuple(AttemptSummary(attempt_ordinal=a["attempt_ordinal"],
                                      marker_key=a["marker_key"], outcome=a.get("outcome"),
                                      started_at=a["started_at"])
                       for a in attempts),
        observations_total=len(observations),
        observations=tuple(ObservationSummary(observation_ordinal=o["observation_ordinal"],
                                              transition_id=o["transition_id"],
                                              observed_at=o["observed_at"],
                                              document=o["document"])
                           for o in observations[-MAX_SHOWN_OBSERVATIONS:]),
        **optional)


def _document(journal: DeliveryJournalView, parent: ParentOperation, only: str | None,
              plan: RestDeliveryPlan | None) -> DeliveryInspection:
    now = journal.now()
    by_id = {child.operation_id: child for child in parent.children}
    rows = tuple(_child(journal, by_id[row.operation_id], row, now, plan)
                 for row in child_rows(parent) if only is None or row.operation_id == only)
    pending = [child for child in sorted(parent.children, key=lambda c: c.ordinal)
               if not finished(child)]
    located: dict[str, Any] = ({"profile": plan.profile.snapshot.ref,
                "authority": plan.binding.snapshot.authority} if plan is not None else {})
    if parent.payloads_expired_at is not None:
        located["payloads_expired_at"] = parent.payloads_expired_at
    return DeliveryInspection(
        parent_id=parent.parent_id, logical_route_id=parent.logical_route_id,
        plan_digest=parent.plan_digest, parent_plan_digest=parent.parent_plan_digest,
        mutation_kind=parent.mutation_kind,
        generation=parent.generation,
        boundary=Interval.of(parent.boundary_from, parent.boundary_to),
        checkpoint_frontier=parent.checkpoint_frontier,
        children_total=len(parent.children),
        complete=not pending,
        next_actions=allowed_actions(pending[0]) if pending else (),
        journal_now=now,
        children=rows,
        verification=verification_basis(plan),
        operator_actions=_actions(journal, parent, only),
        leases=tuple(HeldLease(operation_id=lease.operation_id, kind=lease.kind,
                               holder=lease.holder, expires_at=lease.expires_at,
                               expires_in_s=max(0, math.ceil(
                                   (lease.expires_at - now).total_seconds())))
                     for lease in journal.list_live_leases(parent.parent_id)
                     if only is None or lease.operation_id in (only, parent.parent_id)),
        **located,
    )


def _keys_text(children: Sequence[InspectedChild]) -> list[str]:
    """Each child's keys as the receiver sees them: what an operator searches its console for."""
    lines = ["keys (as the receiver sees them):"]
    for child in children:
        pad = " " * len(str(child.ordinal))
        lines += [f"  child {child.ordinal}  delivery_key           {child.delivery_key}",
                  f"  {pad}        receiver_mutation_key  {child.receiver_mutation_key}"]
        if child.payload_filename:
            lines.append(f"  {pad}        payload_filename       {child.payload_filename}")
    return [*lines, ""]


def _text(document: DeliveryInspection) -> str:
    lines = [f"delivery {document.parent_id}",
             f"  route {document.logical_route_id}  {document.mutation_kind}  boundary "
             f"{document.boundary.render()}",
             f"  frontier {document.checkpoint_frontier}/{document.children_total}"
             + ("  complete" if document.complete else ""),
             f"  plan {document.plan_digest}"]
    if "profile" in document.model_fields_set:
        lines.append(f"  profile {document.profile} -> {document.authority}")
    if document.payloads_expired_at is not None:
        lines.append(f"  payloads expired at "
                     f"{document.payloads_expired_at.isoformat(timespec='seconds')} (payload "
                     "retention): resume and reconcile refuse with retention.payloads_expired")
    lines.append(verification_text(document.verification))
    lines += ["", render_table(document.children), ""]
    lines += _keys_text(document.children)
    for child in document.children:
        if child.last_error_code or child.allowed_actions:
            detail = [f"  child {child.ordinal} {child.operation_id}"]
            if child.last_error_code:
                detail.append(f"    error {child.last_error_code}")
            if child.likely_cause is not None:
                detail.append(f"    likely cause: {child.likely_cause.summary}")
            if child.observations_total:
                last = child.observations[-1]
                detail.append(f"    {child.observations_total} observation(s), last "
                              f"{last.transition_id} at {last.observed_at.isoformat()}")
            if child.receipt_age_s is not None:
                detail.append(f"    receipt age {child.receipt_age_s} s"
                              + (f", certified until {child.receipt_ttl_horizon.isoformat()}"
                                 if child.receipt_ttl_horizon is not None else ""))
            detail.append(f"    payload {child.payload_key}")
            detail.append(f"    allowed next actions: {', '.join(child.allowed_actions)}")
            lines += detail
    lines += _leases_text(document)
    lines += _trail_text(document)
    lines.append(f"next actions: {', '.join(document.next_actions) or 'none (complete)'}")
    return "\n".join(lines)


def _leases_text(document: DeliveryInspection) -> list[str]:
    """Who holds a lease on the delivery and until when (journal clock): a lost run's lease
    blocks a takeover until it expires; `resume --apply` and `reconcile --apply` wait for it."""
    if not document.leases:
        return []
    ordinals = {child.operation_id: f"child {child.ordinal}" for child in document.children}
    lines = ["leases held (journal clock):"]
    for lease in document.leases:
        until = lease.expires_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines.append(f"  {ordinals.get(lease.operation_id, 'delivery')} {lease.kind} lease: "
                     f"{lease.holder} until {until} ({lease.expires_in_s} s)")
    return [*lines, "  a live run renews its leases; a lost run's expire then, and "
            "`resume --apply` or `reconcile --apply` waits for that", ""]


def _trail_text(document: DeliveryInspection) -> list[str]:
    """The audit trail as a small table: when (journal clock), who, what, on which operation."""
    if not document.operator_actions:
        return ["operator actions: none"]
    ordinals = {child.operation_id: f"child {child.ordinal}" for child in document.children}
    rows = [(a.at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), a.actor, a.command,
             ordinals.get(a.operation_id, "delivery"),
             f"{a.before_revision}->{a.after_revision}",
             f"{a.from_state or '-'} -> {a.to_state or '-'}", a.evidence_digest or "-")
            for a in document.operator_actions]
    header = ("at (journal)", "actor", "command", "on", "revision", "state", "evidence")
    return ["operator actions:", text_table(header, rows, ()), ""]


@click.command(name="inspect")
@journal_options("Plan store searched first for the plan (for the profile's certified receipt "
                 "TTL); else the artifact store's published copy.")
@FORMAT_OPTION
def inspect(operation_id: str, control: ControlPlaneArgs, fmt: str) -> None:
    """Show every axis, the frontier, artifact ids, receipt age, allowed next actions and the
    operator actions recorded (read-only: takes no lease, writes nothing)."""

    def body() -> int:
        plane = resolve_control_plane(control)
        parent_id, only = parse_operation_id(operation_id)
        journal = open_existing_journal(plane.journal, environment_id=plane.environment_id,
                                        operation_namespace=plane.operation_namespace)
        try:
            parent = load_delivery(journal, parent_id, only)
            plan = _plan(plane, parent.plan_digest)
            document = _document(journal, parent, only, plan)
        finally:
            close_quietly(journal)
        emit(document, fmt, lambda shown: "\n".join(
            [_text(shown), *reconcile_lines(shown.children, plane.locators, ProofWays.of(plan))]))
        return 0

    run_guarded(fmt, body)

