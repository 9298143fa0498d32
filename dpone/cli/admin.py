"""`dpone admin gate`: the environment-wide mutation gate and its journal epoch.

After a journal failover or restore whose zero-RPO continuity cannot be proven, a platform
operator blocks the gate: no child of the environment enters SUBMITTING (every run stops with
``REST_DELIVERY_JOURNAL_EPOCH_BLOCKED``, exit 4), while inspection, receipt observation and
reconciliation stay available. New mutations resume only when the gate is opened at a new,
higher journal epoch (the attestation that the reconciliation campaign is complete and was
approved). Every change is an audited journal transaction; `show` is read-only.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from typing import Any, TypeVar

import click

from dpone.cli._hints import command, redact
from dpone.cli._inputs import DEFAULT_ENVIRONMENT, DEFAULT_JOURNAL, close_quietly, open_existing_journal
from dpone.cli._lazy import LazyGroup
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.contracts import DponeError
from dpone.contracts.documents import MutationGateDocument
from dpone.contracts.journal import DeliveryJournalPort, MutationGateStatus

_MAX_REASON = 500
_F = TypeVar("_F", bound=Callable[..., Any])


def _locators(journal_url: str, environment_id: str) -> tuple[str, ...]:
    words: list[str] = []
    if environment_id != DEFAULT_ENVIRONMENT:
        words += ["--environment", environment_id]
    if journal_url != DEFAULT_JOURNAL:
        words += ["--journal", journal_url]
    return tuple(words)


def _document(status: MutationGateStatus, journal_url: str, *, changed: bool) -> MutationGateDocument:
    where = _locators(journal_url, status.environment_id)
    nexts: tuple[str, ...] = ()
    if status.mutation_gate == "BLOCKED":
        nexts = (command("admin", "gate", "open", "--epoch", str(status.journal_epoch + 1),
                         "--reason", "<the approved epoch attestation>", *where),)
    return MutationGateDocument(
        journal=redact(journal_url), environment_id=status.environment_id,
        mutation_gate=status.mutation_gate, journal_epoch=status.journal_epoch,
        reason=status.reason, updated_by=status.updated_by, updated_at=status.updated_at,
        changed=changed, next_commands=nexts)


def _text(document: MutationGateDocument) -> str:
    lines = [f"mutation gate {document.mutation_gate} at journal epoch {document.journal_epoch} "
             f"(environment {document.environment_id})"]
    if document.reason:
        lines.append(f"  reason: {document.reason}")
    if document.updated_by and document.updated_at:
        lines.append(f"  set by {document.updated_by} at "
                     f"{document.updated_at.isoformat(timespec='seconds')}")
    if document.mutation_gate == "BLOCKED":
        lines.append("  no child enters SUBMITTING: runs stop with "
                     "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED (exit 4); inspect, receipt polling and "
                     "reconcile stay available")
    lines.extend(f"  next: {line}" for line in document.next_commands)
    return "\n".join(lines)


def _journal_options(command_: _F) -> _F:
    for option in reversed([
            click.option("--environment", "environment_id", default=DEFAULT_ENVIRONMENT,
                         show_default=True, help="The environment id the journal is scoped to."),
            click.option("--journal", "journal_url", default=DEFAULT_JOURNAL, show_default=True,
                         help="Journal: a SQLite file (local development) or postgresql://... "
                         "URL.")]):
        command_ = option(command_)
    return command_


def _reason(value: str) -> str:
    text = value.strip()
    if not text or len(text) > _MAX_REASON or "\n" in text:
        raise DponeError(code="input.invalid_argument",
                         message=f"--reason must be one line of 1..{_MAX_REASON} characters",
                         hint="Say why, e.g. the restore or the approval it rests on.")
    return text


@click.group("admin", cls=LazyGroup)
def admin() -> None:
    """Platform administration of an environment's journal (audited)."""


@admin.group("gate")
def gate() -> None:
    """The environment-wide mutation gate and its journal epoch."""


def _block(journal: DeliveryJournalPort, environment_id: str, reason: str, actor: str) -> None:
    current = journal.gate_status(environment_id)
    journal.set_mutation_gate(environment_id, "BLOCKED", epoch=current.journal_epoch,
                              actor=actor, reason=reason)


def _open(journal: DeliveryJournalPort, environment_id: str, epoch: int, reason: str,
          actor: str) -> None:
    current = journal.gate_status(environment_id)
    if current.mutation_gate == "BLOCKED" and epoch <= current.journal_epoch:
        raise DponeError(
            code="input.invalid_argument",
            message=f"the gate is BLOCKED at epoch {current.journal_epoch}: it opens only at a "
            f"new, higher epoch, not {epoch}",
            hint=f"Once the reconciliation campaign is approved, open it with "
            f"--epoch {current.journal_epoch + 1}.")
    if epoch < current.journal_epoch:
        raise DponeError(code="input.invalid_argument",
                         message=f"epochs never decrease: the journal stands at "
                         f"{current.journal_epoch}, not {epoch}")
    journal.set_mutation_gate(environment_id, "OPEN", epoch=epoch, actor=actor, reason=reason)


def _run(journal_url: str, environment_id: str, fmt: str,
         change: Callable[[DeliveryJournalPort], None] | None = None) -> None:
    def body() -> int:
        journal = open_existing_journal(journal_url, environment_id=environment_id)
        try:
            if change is not None:
                change(journal)
            status = journal.gate_status(environment_id)
        finally:
            close_quietly(journal)
        emit(_document(status, journal_url, changed=change is not None), fmt, _text)
        return 0

    run_guarded(fmt, body)


_ACTOR = click.option("--actor", default=None,
                      help="Who decides (recorded in the audit trail); default: the OS user.")
_REASON = click.option("--reason", required=True, help="Why, in one line (audited).")


@gate.command("show")
@_journal_options
@FORMAT_OPTION
def show(journal_url: str, environment_id: str, fmt: str) -> None:
    """Show the gate and its journal epoch (read-only)."""
    _run(journal_url, environment_id, fmt)


@gate.command("block")
@_journal_options
@_REASON
@_ACTOR
@FORMAT_OPTION
def block(journal_url: str, environment_id: str, reason: str, actor: str | None,
          fmt: str) -> None:
    """Block every new mutation of the environment (after an unproven failover or restore)."""
    _run(journal_url, environment_id, fmt,
         lambda journal: _block(journal, environment_id, _reason(reason),
                                actor or getpass.getuser()))


@gate.command("open")
@_journal_options
@click.option("--epoch", type=click.IntRange(min=0), required=True,
              help="The attested journal epoch; higher than the current one when BLOCKED.")
@_REASON
@_ACTOR
@FORMAT_OPTION
def open_gate(journal_url: str, environment_id: str, epoch: int, reason: str,
              actor: str | None, fmt: str) -> None:
    """Reopen mutations at a new journal epoch (the approved end of a reconciliation campaign)."""
    _run(journal_url, environment_id, fmt,
         lambda journal: _open(journal, environment_id, epoch, _reason(reason),
                               actor or getpass.getuser()))


def _register_lazy() -> None:
    """`admin revoke|unrevoke|revocations` (dpone.cli.admin_revoke), imported when they run."""
    from dpone.cli.main import ADMIN_COMMANDS  # noqa: PLC0415 - main imports this module lazily

    for name, target, summary in ADMIN_COMMANDS:
        admin.add_lazy(name, target, summary)


_register_lazy()
