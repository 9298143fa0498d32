"""`dpone admin revoke|unrevoke|revocations`: the environment's deny-only revocation list.

A platform operator revokes a compromised operation profile (``--profile ID@VERSION``) or
connection binding (``--binding ID``): from the commit on, no child of the environment whose
plan uses it enters SUBMITTING (the run stops with ``governance.profile_revoked`` or
``governance.binding_revoked``, exit 3, before any MAY_ATTEMPT marker or request), while
inspection, receipt observation and reconciliation stay available. The list only denies: it
cannot enable a behaviour or reinterpret a pinned plan. `unrevoke` lifts an entry and `dpone
delivery resume --apply` continues. Every change is one audited journal transaction;
`revocations` is read-only.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable

import click
from pydantic import ValidationError

from dpone.cli._environment import ControlPlane, resolve_control_plane
from dpone.cli._hints import LIST, command, redact
from dpone.cli._inputs import (
    ControlPlaneArgs,
    close_quietly,
    control_plane_options,
    open_existing_journal,
    open_journal,
)
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.contracts import DponeError
from dpone.contracts.documents import (
    RevocationChangeSummary,
    RevocationHistoryEntry,
    RevocationListDocument,
    RevokedEntry,
)
from dpone.contracts.journal import DeliveryJournalPort
from dpone.contracts.revocation import RevocationKind, RevocationStatus, RevocationTarget

_MAX_REASON = 500
_FLAGS: dict[RevocationKind, str] = {"profile": "--profile", "binding": "--binding"}
_CODES: dict[RevocationKind, str] = {"profile": "governance.profile_revoked",
                                     "binding": "governance.binding_revoked"}


def _target(profile: str | None, binding: str | None) -> RevocationTarget:
    if (profile is None) == (binding is None):
        raise DponeError(code="input.invalid_argument",
                         message="name exactly one of --profile ID@VERSION or --binding ID",
                         hint="e.g. --profile mock.batch-ndjson@1 or --binding mock_measurements")
    kind: RevocationKind = "profile" if profile is not None else "binding"
    ref = profile if profile is not None else binding
    try:
        return RevocationTarget(kind=kind, ref=str(ref))
    except ValidationError:
        form = "ID@VERSION (e.g. mock.batch-ndjson@1)" if kind == "profile" else \
            "a binding id (e.g. mock_measurements)"
        raise DponeError(code="input.invalid_argument",
                         message=f"{_FLAGS[kind]} {ref!r} is not {form}",
                         hint="Give the ref the plan names: `dpone check` shows the profile "
                              "ref and binding id of a workload.") from None


def _reason(value: str) -> str:
    text = value.strip()
    if not text or len(text) > _MAX_REASON or "\n" in text or "\r" in text:
        raise DponeError(code="input.invalid_argument",
                         message=f"--reason must be one line of 1..{_MAX_REASON} characters",
                         hint="Say why, e.g. the incident or the approval it rests on.")
    return text


def _where(plane: ControlPlane) -> list[str]:
    return plane.locators.options(LIST)


def _document(status: RevocationStatus, plane: ControlPlane,
              change: RevocationChangeSummary | None) -> RevocationListDocument:
    where = _where(plane)
    nexts = tuple(
        command("admin", "unrevoke", _FLAGS[entry.kind], entry.ref, "--reason",
                "<why it is safe again>", *where)
        for entry in status.revoked)
    fields: dict[str, object] = {
        "journal": redact(plane.journal), "environment_id": status.environment_id,
        "revoked": tuple(RevokedEntry(kind=e.kind, ref=e.ref, reason=e.reason,
                                      revoked_by=e.revoked_by, revoked_at=e.revoked_at)
                         for e in status.revoked),
        "history": tuple(RevocationHistoryEntry(action=h.action, kind=h.kind, ref=h.ref,
                                                reason=h.reason, actor=h.actor, at=h.at)
                         for h in status.history),
        "next_commands": nexts}
    if change is not None:  # `change` appears only in the documents of revoke and unrevoke
        fields["change"] = change
    return RevocationListDocument.model_validate(fields)


def _text(document: RevocationListDocument) -> str:
    lines: list[str] = []
    change = document.change
    if change is not None:
        done = "revoked" if change.action == "revoke" else "unrevoked"
        lines.append(f"{done} {change.kind} {change.ref}" if change.changed else
                     f"{change.kind} {change.ref} was already "
                     f"{'revoked' if change.action == 'revoke' else 'not revoked'}: "
                     "nothing changed")
        if change.action == "revoke":
            lines.append(f"  no new submit uses it: runs stop with {_CODES[change.kind]} "
                         "(exit 3); inspect, receipt polling and reconcile stay available")
    lines.append(f"revocation list of environment {document.environment_id}: "
                 f"{len(document.revoked)} revoked")
    for entry in document.revoked:
        lines.append(f"  {entry.kind:<8} {entry.ref}  by {entry.revoked_by} at "
                     f"{entry.revoked_at.isoformat(timespec='seconds')}: {entry.reason}")
    if document.history:
        lines.append("recent changes (newest first):")
        lines.extend(f"  {h.at.isoformat(timespec='seconds')}  {h.action:<8} {h.kind} {h.ref}"
                     f"  by {h.actor}: {h.reason}" for h in document.history[:10])
    lines.extend(f"  next: {line}" for line in document.next_commands)
    return "\n".join(lines)


Change = Callable[[DeliveryJournalPort, str], RevocationChangeSummary]


def _run(control: ControlPlaneArgs, fmt: str, planned: Callable[[], Change] | None = None
         ) -> None:
    def body() -> int:
        change = planned() if planned is not None else None  # arguments refused before I/O
        plane = resolve_control_plane(control)
        journal = open_existing_journal(plane.journal, environment_id=plane.environment_id)
        summary = None
        try:
            if change is not None:
                # A change needs the revocation table: apply pending migrations (as every
                # delivery does) to the journal that exists.
                close_quietly(journal)
                journal = open_journal(plane.journal, environment_id=plane.environment_id)
                summary = change(journal, plane.environment_id)
            status = journal.revocation_status(plane.environment_id)
        finally:
            close_quietly(journal)
        emit(_document(status, plane, summary), fmt, _text)
        return 0

    run_guarded(fmt, body)


def _changer(profile: str | None, binding: str | None, reason: str, actor: str | None, *,
             revoked: bool) -> Callable[[], Change]:
    return lambda: _change(_target(profile, binding), _reason(reason), actor, revoked=revoked)


def _change(target: RevocationTarget, why: str, actor: str | None, *, revoked: bool) -> Change:

    def change(journal: DeliveryJournalPort, environment_id: str) -> RevocationChangeSummary:
        changed = journal.set_revocation(environment_id, target, revoked=revoked,
                                         actor=actor or getpass.getuser(), reason=why)
        return RevocationChangeSummary(action="revoke" if revoked else "unrevoke",
                                       kind=target.kind, ref=target.ref, changed=changed)

    return change


_PROFILE = click.option("--profile", metavar="ID@VERSION", default=None,
                        help="An operation profile, as a plan names it (e.g. "
                             "mock.batch-ndjson@1).")
_BINDING = click.option("--binding", metavar="ID", default=None,
                        help="A connection binding id (e.g. mock_measurements).")
_REASON = click.option("--reason", required=True, help="Why, in one line (audited).")
_ACTOR = click.option("--actor", default=None,
                      help="Who decides (recorded in the audit trail); default: the OS user.")


def _change_command(name: str, *, revoked: bool, summary: str) -> click.Command:
    """``revoke`` / ``unrevoke``: the same options, one audited change of the list."""

    @click.command(name, help=summary)
    @_PROFILE
    @_BINDING
    @_REASON
    @_ACTOR
    @control_plane_options()
    @FORMAT_OPTION
    def change(profile: str | None, binding: str | None, reason: str, actor: str | None,
               control: ControlPlaneArgs, fmt: str) -> None:
        _run(control, fmt, _changer(profile, binding, reason, actor, revoked=revoked))

    return change


revoke = _change_command(
    "revoke", revoked=True,
    summary="Deny every new submit that uses a profile or binding (audited; nothing else stops).")
unrevoke = _change_command(
    "unrevoke", revoked=False,
    summary="Lift a revocation: new submits of plans that use it may go on (audited).")


@click.command("revocations")
@control_plane_options()
@FORMAT_OPTION
def revocations(control: ControlPlaneArgs, fmt: str) -> None:
    """Show the revocation list and its recent audited changes (read-only)."""
    _run(control, fmt)
