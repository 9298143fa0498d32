"""What a run of `dpone deliver` or `dpone delivery resume` prints when it ends: the
``dpone.delivery_result.v1`` document, its text summary, the next command and the exit code.

Once a delivery is admitted every run ends with that document: ``completed``, ``pending``,
``blocked`` (a child's own outcome stopped it) or ``stopped`` (a :class:`DeliveryStopped`: an
error of the run's environment, raised by the supervisor after admission and rendered here with
the journal's state of every child; its exit code is the error's catalog class)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from dpone.cli._hints import (
    RECONCILE_ACTION,
    Locators,
    ProofWays,
    inspect_command,
    reconcile_choices,
    reconcile_command,
    reconcile_text,
    resume_command,
)
from dpone.cli._output import INTERRUPTED_EXIT, emit
from dpone.cli.delivery._delivery_run import SealedShape
from dpone.cli.delivery._report import empty_note, render_table
from dpone.contracts import ERROR_CATALOG, DponeError, Retryability
from dpone.contracts.documents import (
    BlockedResult,
    BlockedSection,
    ChildRow,
    CompletedResult,
    Interval,
    PendingResult,
    PendingSection,
    SourceChange,
    StoppedResult,
    StoppedSection,
)
from dpone.contracts.journal import DeliveryJournalView, ParentOperation
from dpone.contracts.state import StateName
from dpone.executor.supervisor import DeliveryBlocked, DeliveryPending, DeliveryResult


@dataclass(frozen=True)
class DeliveryStopped:
    """An admitted delivery that this run left on a failure outside the children's own
    outcome: the receiver or the credential unavailable, the journal or the artifact store
    failing, a lease held elsewhere. ``error`` carries the catalog code and exit code; the
    journal keeps every child's state, and the run can be continued with ``resume``."""

    error: DponeError
    parent_id: str
    checkpoint_frontier: int
    kind: Literal["stopped"] = "stopped"

    @classmethod
    def of(cls, error: DponeError, parent: ParentOperation) -> DeliveryStopped:
        return cls(error, parent.parent_id, parent.checkpoint_frontier)

    @property
    def resumable(self) -> bool:
        """True when the stop is an unavailable environment: resuming later is the fix."""
        return self.error.spec.retryability is Retryability.WHEN_AVAILABLE


RunResult = DeliveryResult | DeliveryStopped
AdmittedResult = CompletedResult | PendingResult | BlockedResult | StoppedResult
"""The ``dpone.delivery_result.v1`` document of an admitted delivery."""


def stopped(error: DponeError, journal: DeliveryJournalView, parent_id: str) -> DeliveryStopped:
    """The admitted delivery ``parent_id`` stopped by ``error``, read back from the journal
    (``error`` itself is raised again when the journal cannot be read)."""
    try:
        parent = journal.load_parent(parent_id)
    except DponeError:
        raise error from None
    return DeliveryStopped.of(error, parent)


def next_command(result: RunResult, locators: Locators, *, wait: bool,
                 ways: ProofWays | None = None) -> str:
    """The one command to run next, carrying every non-default locator of this run: for a
    child to reconcile, the ``reconcile`` command when it needs no proof to fill in (the
    profile's certified query by key), else ``inspect`` (the text names the choices)."""
    if isinstance(result, DeliveryPending):
        return resume_command(result.parent_id, locators, wait=True)
    if isinstance(result, DeliveryStopped) and result.resumable:
        return resume_command(result.parent_id, locators, wait=wait)
    if isinstance(result, DeliveryStopped):  # the operation that stops it, when one is named
        blocking = result.error.details.get("conflicting_operation_id")
        return inspect_command(str(blocking or result.error.operation_id or result.parent_id),
                               locators)
    if isinstance(result, DeliveryBlocked) and ERROR_CATALOG[result.code].retryability in (
            Retryability.AFTER_FIX, Retryability.WHEN_AVAILABLE):
        return resume_command(result.parent_id, locators, wait=wait)  # once its cause is fixed
    if isinstance(result, DeliveryBlocked):
        reconcile = _reconcile_choices(result, locators, ways)
        found = _found_job(result)
        if reconcile and result.operation_id is not None and found is not None:
            return reconcile_command(result.operation_id, locators, "--receipt-id", found)
        if reconcile and ways is not None and ways.key_query:
            return reconcile[0]
        return inspect_command(result.operation_id or result.parent_id, locators)
    return inspect_command(result.parent_id, locators)


def _found_job(result: DeliveryBlocked) -> str | None:
    """The job a duplicate answer named under the child's key, when it was not adopted (its
    payload not proven the child's): the receipt the operator's reconcile reads."""
    job = result.evidence.get("duplicate_job_id")
    return job if isinstance(job, str) and job else None


def _reconcile_choices(result: DeliveryBlocked, locators: Locators,
                       ways: ProofWays | None) -> tuple[str, ...]:
    if result.operation_id is None or RECONCILE_ACTION not in result.allowed_actions:
        return ()
    return reconcile_choices(result.operation_id, locators, ways or ProofWays())


_NOT_SUBMITTED: Final = frozenset({StateName.SEALED, StateName.RETRY_WAIT})
"""States of a child no request of which is in flight or answered (a resume submits it)."""


def _stopped(result: DeliveryStopped, next_step: str) -> StoppedSection:
    error = result.error
    return StoppedSection(
        code=error.code, message=error.message, operation_id=error.operation_id,
        hint=error.hint or f"{error.spec.operator_action} Next: {next_step}",
        exit_code=error.exit_code, retryability=error.spec.retryability, details=error.details)


def _blocked(result: DeliveryBlocked) -> BlockedSection:
    spec = ERROR_CATALOG[result.code]
    return BlockedSection(code=result.code, operation_id=result.operation_id,
                          remote_effect=result.remote_effect, evidence=result.evidence,
                          allowed_actions=result.allowed_actions,
                          operator_action=spec.operator_action, exit_code=spec.exit_code)


def result_document(result: RunResult, shape: SealedShape, children: Sequence[ChildRow],
                    next_step: str,
                    extra: Mapping[str, SourceChange | None] | None = None) -> AdmittedResult:
    """The ``dpone.delivery_result.v1`` document of ``result``; ``extra`` adds the fields only
    `dpone deliver` writes (``source_changed_since_seal``)."""
    common: dict[str, Any] = {
              "parent_id": result.parent_id, "checkpoint_frontier": result.checkpoint_frontier,
              "children_total": len(shape.children), "rows_total": shape.rows_total,
              "boundary": Interval.of(shape.boundary_from, shape.boundary_to),
              "children": tuple(children), "next_command": next_step, **(extra or {})}
    if isinstance(result, DeliveryStopped):
        return StoppedResult(stopped=_stopped(result, next_step), **common)
    if isinstance(result, DeliveryBlocked):
        return BlockedResult(blocked=_blocked(result), **common)
    if isinstance(result, DeliveryPending):
        unfinished = [row for row in children if row.axes.checkpoint_state != "PROMOTED"
                      and row.empty_input != "skipped"]
        waiting = sum(1 for row in unfinished if row.state_name in _NOT_SUBMITTED)
        return PendingResult(pending=PendingSection(
            operation_id=result.operation_id, ordinal=result.ordinal,
            continuation_kind=result.continuation_kind,
            next_check_after=result.next_check_after,
            children_observing=len(unfinished) - waiting, children_not_submitted=waiting),
            **common)
    return CompletedResult(**common)


def result_text(document: AdmittedResult, result: RunResult, locators: Locators | None = None,
                ways: ProofWays | None = None) -> str:
    """The summary for people: the children table, the outcome and the next command (for a
    child to reconcile with a proof to fill in, the ``reconcile`` choices before it)."""
    lines = [render_table(document.children, show_all=False), ""]
    head = (f"{result.kind}: {document.boundary.render()} "
            f"{document.rows_total} rows in {document.children_total} child(ren); "
            f"frontier {result.checkpoint_frontier}/{document.children_total}")
    lines.append(head)
    lines += [note for note in (empty_note(document.children),) if note]
    lines.append(f"  parent {result.parent_id}")
    if isinstance(document, StoppedResult) and isinstance(result, DeliveryStopped):
        stopped = document.stopped
        lines += [f"  {stopped.code}: {stopped.message}"]
        if stopped.operation_id:
            lines.append(f"  operation {stopped.operation_id}")
        lines.append(f"  hint: {result.error.fix_hint}")
    elif isinstance(document, BlockedResult) and isinstance(result, DeliveryBlocked):
        blocked = document.blocked
        lines += [f"  {result.code}: remote effect {blocked.remote_effect}",
                  f"  operation {result.operation_id}",
                  f"  hint: {blocked.operator_action}",
                  f"  allowed next actions: {', '.join(result.allowed_actions)}"]
        if (locators is not None and result.operation_id is not None
                and _found_job(result) is not None and _reconcile_choices(result, locators, ways)):
            lines.append(f"  the receiver named job {_found_job(result)} under this child's key; "
                         "reconcile reads it (read-only) and records what it proves")
        elif (locators is not None and result.operation_id is not None
                and _reconcile_choices(result, locators, ways)
                and not (ways is not None and ways.key_query)):
            lines += [f"  {line}" for line in reconcile_text(
                result.operation_id, "it", locators, ways or ProofWays())]
    elif isinstance(document, PendingResult) and isinstance(result, DeliveryPending):
        due = document.pending.next_check_after
        pending = document.pending
        lines.append(f"  child {result.ordinal} holds receipt {result.receipt.get('id', '')}; "
                     f"next check after {due.isoformat() if due else None}; observing "
                     "it again resends nothing")
        lines.append(f"  {pending.children_observing} child(ren) observed, "
                     f"{pending.children_not_submitted} not submitted yet: exit 0 means pending "
                     "on a durable receipt, and the next command continues (add --wait to keep "
                     "observing until every child is done)")
    lines.append(f"  next: {document.next_command}")
    return "\n".join(lines)


def interrupted() -> DponeError:
    """``run.interrupted``: Ctrl-C stopped an admitted delivery (exit 130)."""
    return DponeError(code="run.interrupted",
                      message="interrupted (Ctrl-C): the journal holds every child's state; "
                              "nothing more was sent")


def exit_code(result: RunResult) -> int:
    """0 completed or pending; a blocked or stopped result exits with its code's class; 130
    when Ctrl-C stopped it."""
    if isinstance(result, DeliveryStopped):
        if result.error.code == "run.interrupted":
            return INTERRUPTED_EXIT
        return result.error.exit_code
    if isinstance(result, DeliveryBlocked):
        return ERROR_CATALOG[result.code].exit_code
    return 0


def emit_result(result: RunResult, shape: SealedShape, children: Sequence[ChildRow],
                fmt: str, locators: Locators, *, wait: bool,
                extra: Mapping[str, SourceChange | None] | None = None,
                ways: ProofWays | None = None) -> int:
    """Write the result (JSON document or text summary) to stdout; returns the exit code.

    ``extra`` adds fields to the JSON document (the text summary's warnings go to stderr);
    ``ways``: how the plan's children can be reconciled (:meth:`ProofWays.of`)."""
    document = result_document(result, shape, children,
                               next_command(result, locators, wait=wait, ways=ways), extra)
    emit(document, fmt, lambda shown: result_text(shown, result, locators, ways))
    return exit_code(result)
