"""`dpone admin prune`: payload retention, the profile's ``retention.payload_days`` enforced.

Sealed payloads (each child's payload bytes and its ``dpone.rest_payload.v1`` document) are
kept until retention lets them go (:mod:`dpone.contracts.retention`): the delivery was admitted
more than ``payload_days`` ago by the journal clock and every child is settled (finalized with
its checkpoint promoted, or with no effect proven). A child in flight, waiting for a retry,
with an UNKNOWN, UNDETERMINED or partial effect, or applied but not verified keeps them. A key
another delivery that still needs it references stays (keys are content-addressed).

Without ``--apply`` the command is a preview: it lists every delivery with its standing and the
keys ``--apply`` would delete, and writes nothing. With ``--apply`` one journal transaction marks
each eligible delivery's payloads expired and audits it (``operator_prune``: actor, keys
deleted, keys kept), then the keys are deleted from the artifact store. `dpone delivery
inspect` shows the expiry; `resume` and `reconcile` of such a delivery refuse with
``retention.payloads_expired``. The journal's effect authority (children, receipts, watermarks,
audit) is never deleted.
"""

from __future__ import annotations

import getpass

import click

from dpone.artifacts import open_prunable_artifact_store
from dpone.cli._environment import ControlPlane, resolve_control_plane
from dpone.cli._hints import INSPECT, command, redact
from dpone.cli._inputs import (
    ControlPlaneArgs,
    close_quietly,
    control_plane_options,
    open_existing_journal,
    open_journal,
)
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.contracts.documents import PayloadPruneDocument, PruneKeptKey, PruneParent
from dpone.contracts.ports import PrunableArtifactPort
from dpone.contracts.retention import RetainedParent, RetentionPlan


def _parent(parent: RetainedParent) -> PruneParent:
    fields: dict[str, object] = {
        "parent_id": parent.parent_id, "standing": parent.standing, "reason": parent.reason,
        "admitted_at": parent.admitted_at, "payload_days": parent.payload_days,
        "keys": len(parent.keys)}
    if parent.payloads_expired_at is not None:
        fields["payloads_expired_at"] = parent.payloads_expired_at
    if parent.unsettled_children:
        fields["unsettled_children"] = parent.unsettled_children
    return PruneParent.model_validate(fields)


def _sweep(plan: RetentionPlan, store: PrunableArtifactPort, *,
           apply: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(deleted or to delete, already absent) among the plan's ``delete`` keys."""
    present: list[str] = []
    absent: list[str] = []
    for key in plan.delete:
        found = store.expire(key) if apply else store.stat(key) is not None
        (present if found else absent).append(key)
    return tuple(present), tuple(absent)


def _document(plan: RetentionPlan, plane: ControlPlane, store: PrunableArtifactPort, *,
              apply: bool) -> PayloadPruneDocument:
    deleted, absent = _sweep(plan, store, apply=apply)
    where = plane.locators.options(("environment", "registry", "journal", "artifacts"))
    nexts: list[str] = []
    if not apply and deleted:
        nexts.append(command("admin", "prune", *where, "--apply"))
    if apply:
        nexts.extend(command("delivery", "inspect", "--operation-id", parent.parent_id,
                             *plane.locators.options(INSPECT))
                     for parent in plan.parents
                     if parent.expired_now)
    return PayloadPruneDocument(
        journal=redact(plane.journal), artifacts=redact(plane.artifacts),
        environment_id=plan.environment_id, applied=apply, journal_now=plan.journal_now,
        parents=tuple(_parent(parent) for parent in plan.parents), deleted=deleted,
        already_absent=absent,
        kept=tuple(PruneKeptKey(key=entry.key, needed_by=entry.needed_by)
                   for entry in plan.keep),
        next_commands=tuple(nexts))


def _text(document: PayloadPruneDocument) -> str:
    mode = "applied" if document.applied else "preview, nothing written or deleted"
    lines = [f"payload retention of environment {document.environment_id} (journal clock "
             f"{document.journal_now.isoformat(timespec='seconds')}): {mode}"]
    for parent in document.parents:
        days = "-" if parent.payload_days is None else str(parent.payload_days)
        lines.append(f"  {parent.parent_id}  {parent.standing:<10} admitted "
                     f"{parent.admitted_at.isoformat(timespec='seconds')}  payload_days {days}"
                     f"  {parent.keys} key(s): {parent.reason}")
    verb = "deleted" if document.applied else "would delete"
    lines.append(f"{verb} {len(document.deleted)} key(s)")
    lines.extend(f"  {key}" for key in document.deleted)
    if document.already_absent:
        lines.append(f"already absent from the store: {len(document.already_absent)} key(s)")
    if document.kept:
        lines.append(f"kept {len(document.kept)} shared key(s) another delivery still needs:")
        lines.extend(f"  {entry.key} (needed by {', '.join(entry.needed_by)})"
                     for entry in document.kept)
    lines.extend(f"  next: {line}" for line in document.next_commands)
    return "\n".join(lines)


@click.command("prune")
@control_plane_options()
@click.option("--artifacts", "artifacts_url", default=None,
              help="Artifact store holding the sealed payloads (default: the environment's).")
@click.option("--apply", "apply", is_flag=True,
              help="Expire and delete. Without it: a read-only preview.")
@click.option("--actor", default=None,
              help="Who decides (recorded in the audit trail); default: the OS user.")
@FORMAT_OPTION
def prune(control: ControlPlaneArgs, apply: bool, actor: str | None, fmt: str) -> None:
    """Delete sealed payloads that retention.payload_days lets go (preview without --apply)."""

    def body() -> int:
        plane = resolve_control_plane(control)
        store = open_prunable_artifact_store(plane.artifacts)
        if apply:  # the expiry columns: apply pending migrations, as every delivery does
            journal = open_journal(plane.journal, environment_id=plane.environment_id)
        else:
            journal = open_existing_journal(plane.journal, environment_id=plane.environment_id)
        try:
            plan = (journal.expire_payloads(plane.environment_id,
                                            actor=actor or getpass.getuser()) if apply
                    else journal.payload_retention(plane.environment_id))
        finally:
            close_quietly(journal)
        emit(_document(plan, plane, store, apply=apply), fmt, _text)
        return 0

    run_guarded(fmt, body)
