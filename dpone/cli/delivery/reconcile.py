"""`dpone delivery reconcile`: prove one child's remote effect and record it, audited.

The proof, strongest first: the profile's certified read-only query by key (neither
``--receipt-id`` nor ``--evidence``: found -> the job's receipt is polled like ``--receipt-id``;
absent past the certified horizon -> receiver-proven not applied; absent earlier or where
absence is not certified -> exit 4, nothing recorded), a read-only poll of a receipt the
operator found (``--receipt-id R``, receiver proven) or an operator evidence document
(``--evidence FILE``, ``dpone.operator_evidence.v1``, operator attested). Without ``--apply`` it
shows what it would record (the query and the poll are read-only, so the preview may send
them); nothing is written. With ``--apply`` it takes the operator lease, writes the immutable
``dpone.rest_delivery_reconciliation.v1`` artifact create-if-absent and records the effect in
one journal transaction with an ``operator_reconcile`` audit row; the lease is released on
every exit path. Exit 0 when a proof is recorded (or would be), 4 when the effect stays unknown
or partial, 2 or 4 when the proof contradicts the durable facts (nothing written), 3 when the
receiver cannot be asked.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import click
from pydantic import ValidationError

from dpone.artifacts import open_artifact_store
from dpone.cli._environment import ControlPlane, resolve_control_plane
from dpone.cli._hints import inspect_command, resume_command
from dpone.cli._hints import reconcile_command as reconcile_hint
from dpone.cli._inputs import (
    ControlPlaneArgs,
    actor_option,
    close_quietly,
    journal_options,
    load_delivery,
    open_existing_journal,
    open_journal,
    operator,
    parse_operation_id,
    recovery_plan,
)
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.cli.delivery._delivery_run import LazyTransport, holder, lease_wait_line
from dpone.contracts import DponeError
from dpone.contracts.design import load_state_contract
from dpone.contracts.documents import (
    MAX_EVIDENCE_BYTES,
    ArtifactSummary,
    OperatorEvidence,
    ProvenEffect,
    ReconciledState,
    ReconcileResult,
)
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, ParentOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedChild
from dpone.executor.clock import SystemClock
from dpone.executor.reconcile import (
    FoundOrphan,
    Proof,
    absence_time_base,
    find_orphans,
    prove_by_evidence,
    prove_by_key_query,
    prove_by_receipt,
    reconcilable,
    reconciliation,
    record,
    resolution,
    untimed_absence,
)
from dpone.executor.supervisor import (
    check_profile,
    projected_lost_submit,
    record_lost_submit,
    sealed_children,
)
from dpone.executor.transport import RestTransportPort, transport_for
from dpone.observability import tracing
from dpone.observability.stages import stage

_RECORDED_EXIT: Final[Mapping[ProvenEffect, Literal[0, 4]]] = {
    "applied": 0, "not_applied": 0, "running": 0, "partially_applied": 4, "unknown": 4}


def read_evidence(path: Path) -> OperatorEvidence:
    """The operator's evidence file, closed and bounded; anything else is exit 2 naming it."""

    def invalid(message: str) -> DponeError:
        return DponeError(code="reconcile.evidence_invalid", message=f"{path}: {message}",
                          details={"path": str(path)})

    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_EVIDENCE_BYTES + 1)
    except OSError as error:
        raise invalid(f"cannot be read ({error.strerror})") from None
    if len(data) > MAX_EVIDENCE_BYTES:
        raise invalid(f"is larger than {MAX_EVIDENCE_BYTES} bytes")
    try:
        document = json.loads(data.decode("utf-8"))
        return OperatorEvidence.model_validate(document)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise invalid("is not a UTF-8 JSON document") from None
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(str(part) for part in item['loc']) or '<root>'}: "
                             f"{item['msg']}" for item in error.errors()[:5])
        raise invalid(f"is not a dpone.operator_evidence.v1 document: {problems}") from None


def _child(parent: ParentOperation, parent_id: str, child_id: str | None) -> ChildOperation:
    if child_id is None:
        open_children = [c.operation_id for c in parent.children
                         if reconcilable(load_state_contract(), c) is not None]
        raise DponeError(code="input.invalid_argument", operation_id=parent_id,
                         message=f"{parent_id} is a delivery; reconcile one child operation id"
                         f" (unknown or partial: {', '.join(open_children) or 'none'})",
                         details={"children": open_children})
    return next(c for c in parent.children if c.operation_id == child_id)


def _guards(plan: RestDeliveryPlan, parent: ParentOperation, release: str | None,
            profile: str | None) -> None:
    for name, expected, actual in (
            ("release (plan) digest", release, parent.plan_digest),
            ("profile contract digest", profile, plan.profile.profile_contract_digest)):
        if expected is not None and expected != actual:
            raise DponeError(code="reconcile.digest_mismatch", operation_id=parent.parent_id,
                             message=f"expected {name} {expected}, the delivery has {actual}",
                             details={"expected": expected, "actual": actual})


def _counted(accepted: int | None, rejected: int | None) -> str:
    """The receiver's counters as words; a counter it did not report is never shown as a value."""
    if accepted is None and rejected is None:
        return "none reported"
    return ", ".join((f"{value} {name}" if value is not None else f"{name} not reported")
                     for name, value in (("accepted", accepted), ("rejected", rejected)))


def _text(document: ReconcileResult) -> str:
    verb = "recorded" if document.applied else "would record (preview: nothing written)"
    proof = document.proof
    counters = document.counters
    lines = [f"reconcile child {document.ordinal} {document.operation_id}: {verb}",
             f"  proof {proof.kind} ({proof.authority})"
             + (f" receipt {proof.receipt_id}" if proof.receipt_id else "")
             + (f" attested by {proof.attested_by}" if proof.attested_by else ""),
             f"  counters: {_counted(counters.accepted_rows, counters.rejected_rows)} of "
             f"{counters.sealed_rows} sealed row(s)",
             f"  effect {document.effect}: {document.before.state_name} (revision "
             f"{document.before.revision}) -> {document.after.state_name} (revision "
             f"{document.after.revision})",
             *(f"  orphan marker of attempt {orphan.attempt_ordinal} covered (its ordinal is "
               f"consumed): {orphan.marker_key} {orphan.marker_digest}"
               for orphan in document.orphan_markers),
             f"  remote-job slot {document.capacity}",
             f"  reconciliation {document.reconciliation_id}"]
    if document.reconciliation_artifact is not None:
        lines.append(f"  artifact {document.reconciliation_artifact.key}")
    if document.next_command:
        lines.append(f"next: {document.next_command}")
    return "\n".join(lines)


@click.command(name="reconcile")
@journal_options("Plan store holding plans/sha256/<hex>.json (written by `dpone deliver`); "
                 "without it, the plan `dpone deliver` published into the artifact store.")
@click.option("--receipt-id", "receipt_id", default=None,
              help="A receipt (job id) found in the receiver's console: polled read-only.")
@click.option("--evidence", "evidence_path", default=None,
              type=click.Path(path_type=Path, dir_okay=False),
              help="A dpone.operator_evidence.v1 JSON document (operator attested).")
@click.option("--expected-release-digest", "release_digest", default=None,
              help="Guard: the plan digest the delivery must have been planned under.")
@click.option("--expected-profile-contract-digest", "profile_digest", default=None,
              help="Guard: the operation profile contract digest the delivery must carry.")
@actor_option
@click.option("--apply", "apply", is_flag=True,
              help="Record the proof. Without it: a read-only preview.")
@FORMAT_OPTION
def reconcile_command(operation_id: str, control: ControlPlaneArgs,
                      receipt_id: str | None, evidence_path: Path | None,
                      release_digest: str | None, profile_digest: str | None,
                      actor: str | None, apply: bool, fmt: str) -> None:
    """Prove one child's unknown or partial remote effect and record it (audited).

    Exit 0 when the proof is recorded (or, without --apply, would be): applied, not applied,
    or a job still running; 4 when the effect stays unknown or partial; 2 for invalid input or a
    digest guard mismatch; 4 when the proof contradicts the journal (another delivery key,
    counts above the sealed rows). A refusal writes nothing.
    """

    def body() -> int:
        if receipt_id is not None and evidence_path is not None:
            raise DponeError(code="reconcile.proof_required",
                             message="give one proof, not both: --receipt-id or --evidence")
        plane = resolve_control_plane(control)
        parent_id, child_id = parse_operation_id(operation_id)
        who = operator(actor)
        evidence = read_evidence(evidence_path) if evidence_path is not None else None
        store = open_artifact_store(plane.artifacts)
        loaded = _load(plane, store, parent_id, child_id)
        parent, child, plan, sealed = loaded.parent, loaded.child, loaded.plan, loaded.sealed
        tracing.annotate(operation_id=child.operation_id, parent_id=parent_id,
                         plan_digest=parent.plan_digest, ordinal=child.ordinal,
                         profile=plan.profile.snapshot.id, environment=plan.environment.ref)
        _guards(plan, parent, release_digest, profile_digest)
        contract = load_state_contract()
        left_in_flight = child  # a lost run's SUBMITTING child: --apply records it UNKNOWN first
        child = projected_lost_submit(contract, child)
        if reconcilable(contract, child) is None:
            raise DponeError(code="reconcile.not_reconcilable", operation_id=child.operation_id,
                             message=f"child {child.ordinal} is {child.state_name}: only a "
                             "finalized unknown or partial effect is reconciled")
        proof_words = (["--receipt-id", str(receipt_id)] if receipt_id is not None
                       else ["--evidence", str(evidence_path)] if evidence_path is not None
                       else [])
        if evidence is not None:
            proof = prove_by_evidence(evidence, sealed)
        elif receipt_id is not None:
            proof = _ask(plan, lambda transport: prove_by_receipt(
                plan, transport, child, sealed, receipt_id))
        else:
            _require_key_query(plan, child)
            proof = _ask(plan, lambda transport: prove_by_key_query(
                plan, transport, child, sealed, now=loaded.now,
                latest_attempt_at=absence_time_base(
                    _latest_attempt(plan, child, loaded.latest_attempt_at), loaded.orphans),
                untimed_orphans=untimed_absence(loaded.orphans, loaded.journal_epoch)))
        tracing.annotate(proof=proof.detail.kind, effect=proof.effect, applied=apply)
        resolved = resolution(contract, child, proof.effect)
        orphans = tuple(orphan.marker for orphan in loaded.orphans)
        document = reconciliation(plan, parent, child, proof, resolved, orphans)
        locators = plane.locators
        result = ReconcileResult(
            applied=False, parent_id=parent_id, operation_id=child.operation_id,
            ordinal=child.ordinal, delivery_key=child.delivery_key,
            plan_digest=parent.plan_digest,
            profile_contract_digest=plan.profile.profile_contract_digest,
            reconciliation_id=document.reconciliation_id, proof=proof.detail,
            counters=proof.counters, effect=proof.effect, before=document.before,
            after=ReconciledState(state_name=resolved.target_name, axes=resolved.target,
                                  revision=child.revision + 2 + len(orphans)),
            transitions=document.transitions, receipt=_scalars(proof.receipt or child.receipt),
            capacity=("released" if proof.effect in ("applied", "not_applied") else "kept"),
            next_command=reconcile_hint(child.operation_id, locators, *proof_words),
            exit_code=_RECORDED_EXIT[proof.effect])
        if orphans:
            result = result.model_copy(update={"orphan_markers": orphans})
        if apply:
            writer = open_journal(plane.journal, environment_id=plane.environment_id,
                                  tier=plan.environment.snapshot.tier,
                                  operation_namespace=plane.operation_namespace)
            try:
                if left_in_flight is not child:
                    _record_lost_submit(writer, left_in_flight, child, plane)
                updated, stored = record(writer, store, document, proof, resolved,
                                         actor=who, holder=holder())
            finally:
                close_quietly(writer)
            result = result.model_copy(update={
                "applied": True,
                "after": ReconciledState(state_name=updated.state_name, axes=updated.axes,
                                         revision=updated.revision),
                "receipt": _scalars(updated.receipt),
                "reconciliation_artifact": ArtifactSummary(key=stored.key, digest=stored.digest),
                "next_command": (resume_command(parent_id, locators, wait=True)
                                 if proof.effect in ("applied", "not_applied", "running")
                                 else inspect_command(child.operation_id, locators))})
        emit(result, fmt, _text)
        return result.exit_code

    def reconcile_stage() -> int:
        with stage("reconcile", operation_id=operation_id):  # the span dpone.reconcile
            return body()

    run_guarded(fmt, reconcile_stage)


def _record_lost_submit(writer: DeliveryJournalPort, left: ChildOperation,
                        expected: ChildOperation, plane: ControlPlane) -> None:
    """Record the lost run's submit of ``left`` as UNKNOWN, waiting (at most one lease TTL, a
    line on stderr) for its mutation lease to expire; refused when the child then is not what
    the preview showed (``journal.revision_conflict``: run the command again)."""

    recorded = record_lost_submit(writer, left, holder=holder(), leases=plane.leases,
                                  clock=SystemClock(), on_wait=lease_wait_line)
    if (recorded.state_name, recorded.revision) != (expected.state_name, expected.revision):
        raise DponeError(code="journal.revision_conflict", operation_id=left.operation_id,
                         message=f"child {left.ordinal} moved to {recorded.state_name} "
                         f"(revision {recorded.revision}) while the lost submit was recorded; "
                         "nothing was reconciled: run the command again")


@dataclass(frozen=True)
class _Loaded:
    """What reconcile reads before it asks anything: the delivery, the child, its plan, its
    sealed form, the journal's clock, epoch and latest attempt start (the query by key's time
    base), and the child's orphan markers."""

    parent: ParentOperation
    child: ChildOperation
    plan: RestDeliveryPlan
    sealed: SealedChild
    now: dt.datetime
    latest_attempt_at: dt.datetime | None
    orphans: tuple[FoundOrphan, ...]
    """The child's orphan MAY_ATTEMPT markers, which the reconciliation covers."""
    journal_epoch: int


def _load(plane: ControlPlane, store: ImmutableArtifactPort, parent_id: str,
          child_id: str | None) -> _Loaded:
    """The delivery, the child, its plan (the plan store, else the copy published into the
    artifact store), its sealed form (checked against the journal) and the journal's clock,
    read without writing anything."""
    journal = open_existing_journal(plane.journal, environment_id=plane.environment_id,
                                    operation_namespace=plane.operation_namespace)
    try:
        parent = load_delivery(journal, parent_id, child_id)
        child = _child(parent, parent_id, child_id)
        plan = recovery_plan(plane.plans, store, parent.plan_digest)
        check_profile(plan)
        sealed = next(s for s in sealed_children(parent, store)
                      if s.descriptor.ordinal == child.ordinal)
        attempts = journal.list_attempts(child.operation_id)
        started = attempts[-1]["started_at"] if attempts else None
        now = journal.now()
        epoch = journal.journal_epoch(child.tenancy.environment_id)
    finally:
        close_quietly(journal)
    return _Loaded(parent, child, plan, sealed, now,
                   started if isinstance(started, dt.datetime) else None,
                   find_orphans(store, child), epoch)


def _require_key_query(plan: RestDeliveryPlan, child: ChildOperation) -> None:
    """Without --receipt-id or --evidence the proof is the query by key: the profile must
    certify one."""
    if plan.profile.snapshot.acknowledgement.query_by_key is None:
        raise DponeError(
            code="reconcile.proof_required", operation_id=child.operation_id,
            message=f"prove the effect of child {child.ordinal} one of three ways: a query by "
            f"key (profile {plan.profile.ref} certifies none, so it cannot be used here), "
            "--receipt-id R (the job you found in the receiver's console), or --evidence FILE "
            "(a dpone.operator_evidence.v1 document)")


def _latest_attempt(plan: RestDeliveryPlan, child: ChildOperation,
                    started: dt.datetime | None) -> dt.datetime:
    if started is None:  # a finalized unknown effect always follows a recorded attempt
        raise DponeError(code="reconcile.not_reconcilable", operation_id=child.operation_id,
                         message=f"child {child.ordinal} has no recorded attempt to time the "
                         f"query by key of profile {plan.profile.ref} from")
    return started


def _ask(plan: RestDeliveryPlan, prove: Callable[[RestTransportPort], Proof]) -> Proof:
    """One read-only proof over the plan's transport (closed after it)."""
    transport = LazyTransport(lambda: transport_for(plan))
    try:
        return prove(transport)
    finally:
        transport.close()


def _scalars(receipt: Mapping[str, object] | None) -> dict[str, str | int | bool]:
    return {key: value for key, value in (receipt or {}).items()
            if isinstance(value, str | int | bool)}
