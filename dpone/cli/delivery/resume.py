"""`dpone delivery resume`: continue an admitted delivery from the journal alone.

Recovery never accepts an authoring manifest: the command reads only the journal, the plan the
journal names (``plans/sha256/<hex>.json`` under ``--plans``, else the copy `dpone deliver`
published into the artifact store, verified against its digest) and each child's sealed
``dpone.rest_payload.v1`` document from the artifact store, and checks every document against
the journal before anything else. Without ``--apply`` it is a read-only preview: each unfinished
child's next action and what ``--apply`` would do; nothing is sent or written. With ``--apply``
it drives the delivery exactly as `dpone deliver` does after admission (same summary, JSON
document and exit codes) under the operator's authority (:mod:`._authority`: the delivery's
operator lease and one ``operator_resume`` audit row); the credential resolves only when the
first request is sent.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._environment import resolve_control_plane
from dpone.cli._hints import Locators, ProofWays
from dpone.cli._hints import resume_command as resume_hint
from dpone.cli._inputs import (
    ControlPlaneArgs,
    actor_option,
    close_quietly,
    journal_options,
    load_delivery,
    open_existing_journal,
    operator,
    parse_operation_id,
    recovery_plan,
)
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.cli._telemetry import expose, metrics_port_options
from dpone.cli.delivery._authority import OperatorAuthority
from dpone.cli.delivery._delivery_result import RunResult, emit_result, interrupted, stopped
from dpone.cli.delivery._delivery_run import (
    SealedShape,
    StepPrinter,
    delivery_ports,
    holder,
    lease_wait_line,
)
from dpone.cli.delivery._report import child_rows, render_table
from dpone.contracts import ERROR_CATALOG, DponeError
from dpone.contracts.documents import Interval, PreviewChild, ResumePreview
from dpone.contracts.journal import (
    ChildOperation,
    DeliveryJournalPort,
    Lease,
    ParentOperation,
)
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.executor.clock import SystemClock
from dpone.executor.supervisor import (
    allowed_actions,
    await_lease,
    check_profile,
    resume,
    resume_step,
    sealed_children,
)

_PLANS_HINT = ("Pass --environment NAME (its file names the artifact store `dpone deliver` "
               "published the plan into), --artifacts URL of that store, or --plans DIR: the "
               "directory `dpone deliver --plans DIR` stored the plan in "
               "(plans/sha256/<hex>.json). Recovery never recompiles a workload.")


def _plan(plans: Path, store: ImmutableArtifactPort, parent: ParentOperation) -> RestDeliveryPlan:
    try:
        plan = recovery_plan(plans, store, parent.plan_digest)
    except DponeError as error:
        if error.code == "plan.not_found":
            error.hint = _PLANS_HINT
            error.operation_id = parent.parent_id
        raise
    check_profile(plan)
    return plan


def _apply_text(child: ChildOperation, step: str, stopper: int | None,
                held: Mapping[str, Lease] | None = None) -> str:
    """What ``--apply`` does with ``child``, for people (``held``: live mutation leases)."""
    receipt = child.receipt or {}
    if step == "not_reached":
        return f"not reached: child {stopper} stops the run first"
    if step == "submit":
        due = f" once due ({child.next_check_after.isoformat()})" if child.next_check_after else ""
        return (f"submit attempt {child.attempt_ordinal + 1} of the sealed request{due}; "
                "same delivery key")
    if step == "finalize_empty_input":
        return "finalize without a request: the child holds no rows (the profile's empty_input)"
    if step == "poll_receipt":
        shown = f"receipt {receipt['id']}" if "id" in receipt else "the receipt"
        return f"poll {shown} read-only; nothing is resent"
    if step == "verify_counters":
        return "verify the recorded counters against the sealed row count"
    if step == "promote_checkpoint":
        return "promote the checkpoint frontier"
    if step in ("take_over_unknown", "take_over_replay"):
        lease = (held or {}).get(child.operation_id)
        until = (f" (held by {lease.holder} until "
                 f"{lease.expires_at.astimezone(dt.UTC):%Y-%m-%dT%H:%M:%SZ}, journal clock: "
                 "--apply waits for it)" if lease is not None else " (it has)")
        if step == "take_over_unknown":
            return (f"record the effect UNKNOWN once the mutation lease has expired{until}; "
                    "nothing is resent")
        return (f"once the mutation lease has expired{until}, replay attempt "
                f"{child.attempt_ordinal + 1} with the same key under the certified fence when "
                "the certified key retention covers the first attempt's age (journal clock); "
                "else record the effect UNKNOWN, nothing resent")
    code = child.last_error_code or "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN"
    return f"stop with {code} (exit {ERROR_CATALOG[code].exit_code}); nothing is sent"


def _preview(parent: ParentOperation, plan: RestDeliveryPlan, shape: SealedShape,
             wait: bool, leases: Sequence[Lease] = ()) -> ResumePreview:
    """The read-only ``dpone.delivery_resume_preview.v1`` document (``leases``: the live
    leases of the delivery, named in what --apply waits for)."""
    held = {lease.operation_id: lease for lease in leases if lease.kind == "mutation"}
    rows = {row.operation_id: row for row in child_rows(parent, shape.children)}
    unfinished = [child for child in sorted(parent.children, key=lambda c: c.ordinal)
                  if resume_step(child, plan) != "none"]
    stopper: int | None = None
    children = []
    for child in unfinished:
        step = "not_reached" if stopper is not None else resume_step(child, plan)
        if step in ("stop", "take_over_unknown"):
            stopper = child.ordinal
        children.append(PreviewChild(**dict(rows[child.operation_id]),
                                     allowed_actions=allowed_actions(child),
                                     next_action=(allowed_actions(child) or ("none",))[0],
                                     on_apply=step,
                                     on_apply_text=_apply_text(child, step, stopper, held)))
    return ResumePreview(
        parent_id=parent.parent_id, logical_route_id=parent.logical_route_id,
        plan_digest=parent.plan_digest, profile=plan.profile.snapshot.ref,
        authority=plan.binding.snapshot.authority,
        boundary=Interval.of(parent.boundary_from, parent.boundary_to),
        checkpoint_frontier=parent.checkpoint_frontier,
        children_total=len(parent.children), rows_total=shape.rows_total,
        sealed_documents_verified=len(shape.children),
        complete=not unfinished, wait=wait, applied=False,
        all_children=tuple(rows.values()),
        children=tuple(children),
    )


def _preview_text(document: ResumePreview, locators: Locators) -> str:
    lines = [f"resume preview of delivery {document.parent_id} (read-only: nothing sent or "
             "written)",
             f"  route {document.logical_route_id}  boundary "
             f"{document.boundary.render()}  frontier "
             f"{document.checkpoint_frontier}/{document.children_total}",
             f"  plan {document.plan_digest}",
             f"  profile {document.profile} -> {document.authority}",
             f"  {document.sealed_documents_verified} sealed payload document(s) match the "
             "journal",
             "", render_table(document.all_children), ""]
    if document.complete:
        lines.append("complete: nothing to resume")
        return "\n".join(lines)
    for child in document.children:
        lines.append(f"  child {child.ordinal} {child.state_name}: next "
                     f"{child.next_action}; --apply: {child.on_apply_text}")
    observing = "" if document.wait else " or still observing (add --wait to keep observing)"
    lines += [f"--apply drives the children one at a time in ordinal order and stops at the first "
              f"that is blocked{observing}",
              "next: " + resume_hint(document.parent_id, locators, wait=document.wait)]
    return "\n".join(lines)


@click.command(name="resume")
@journal_options("Plan store searched first for the plan (`dpone deliver --plans`); else the "
                 "artifact store's published copy.")
@actor_option
@click.option("--wait/--no-wait", "wait", default=False, show_default=True,
              help="Keep observing asynchronous jobs in-process until every child is terminal.")
@click.option("--apply", "apply", is_flag=True,
              help="Drive the delivery. Without it: a read-only preview.")
@metrics_port_options
@FORMAT_OPTION
def resume_command(operation_id: str, control: ControlPlaneArgs, actor: str | None, wait: bool,
                   apply: bool, metrics_port: int | None, metrics_address: str,
                   fmt: str) -> None:
    """Continue an admitted delivery from its journal, stored plan and sealed payloads.

    Never reads a workload or the source: a changed source does not affect it. Every sealed
    payload document must match the journal (else REST_DELIVERY_INTENT_CONFLICT, nothing sent).
    Without --apply: exit 0 and a preview of each unfinished child's next action (no lease
    taken, nothing written). With --apply: the operator (--actor, default the OS user) holds the
    delivery's operator lease for the run and one operator_resume audit row records it; exit 0
    delivered or pending, 2 invalid or intent conflict, 3 unavailable or another operator's
    lease, 4 remote effect unknown or partial, 5 proven terminal receiver failure.
    """

    def body() -> int:
        expose(metrics_port, metrics_address)
        plane = resolve_control_plane(control)
        parent_id, child_id = parse_operation_id(operation_id)
        who = operator(actor) if apply else None
        store = open_artifact_store(plane.artifacts)
        journal = open_existing_journal(plane.journal, environment_id=plane.environment_id,
                                        operation_namespace=plane.operation_namespace)
        try:
            parent = load_delivery(journal, parent_id, child_id)
            leases = journal.list_live_leases(parent_id)
            plan = _plan(plane.plans, store, parent)
            sealed = sealed_children(parent, store)
        finally:
            close_quietly(journal)
        shape = SealedShape(parent.boundary_from, parent.boundary_to, sealed,
                            sum(child.descriptor.row_count for child in sealed))
        locators = plane.locators
        if who is None:
            document = _preview(parent, plan, shape, wait, leases)
            emit(document, fmt, lambda preview: _preview_text(preview, locators))
            return 0
        def await_lost_runs(opened: DeliveryJournalPort) -> None:
            # A lost or interrupted run's leases (its operator lease, a child's mutation or
            # observation lease) expire within one TTL: wait for them instead of refusing.
            for lease in opened.list_live_leases(parent_id):
                await_lease(opened, lease.operation_id, lease.kind,
                            holder=who if lease.kind == "operator" else holder(),
                            leases=plane.leases, clock=SystemClock(), on_wait=lease_wait_line)

        with delivery_ports(plan, plane.journal, store, environment_id=plane.environment_id,
                            on_open=await_lost_runs,
                            announce=f"resuming delivery {parent_id}: {len(sealed)} child(ren)") as (
                journal, run_journal, transport, run_store), OperatorAuthority(
                    journal, parent_id, who, "resume", plane.leases):
            printer = StepPrinter(shape)
            result: RunResult
            try:
                result = resume(plan, parent_id, sealed, run_journal, run_store, transport,
                                holder=holder(), wait=wait, clock=SystemClock(),
                                observer=printer, on_wait=printer.wait, leases=plane.leases)
            except DponeError as error:
                # The delivery is admitted: its summary reads the journal, whatever stopped it.
                result = stopped(error, journal, parent_id)
            except KeyboardInterrupt:
                result = stopped(interrupted(), journal, parent_id)  # Ctrl-C: exit 130
            finally:
                printer.close()
            children = child_rows(journal.load_parent(parent_id), sealed)
        return emit_result(result, shape, children, fmt, locators, wait=wait,
                           ways=ProofWays.of(plan))

    run_guarded(fmt, body)
