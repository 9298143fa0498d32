"""`dpone delivery list`: the deliveries a journal holds, newest first, read-only.

One bounded journal read (the newest ``--limit`` admissions of the environment, each with its
children grouped by state); nothing is migrated, created or written. A delivery's status is
derived from its children exactly as `dpone delivery resume` would treat them
(:func:`dpone.executor.supervisor.delivery_status`); its next actions are those of its first
unfinished child, as `dpone delivery inspect` shows them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import click

from dpone.cli._environment import resolve_control_plane
from dpone.cli._hints import Locators, command, inspect_command, redact
from dpone.cli._inputs import (
    ControlPlaneArgs,
    close_quietly,
    control_plane_options,
    open_existing_journal,
)
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.cli._table import text_table
from dpone.contracts import DponeError
from dpone.contracts.documents import DeliveryList, Interval, ListedDelivery
from dpone.contracts.journal import DeliverySummary
from dpone.executor.supervisor import (
    DELIVERY_STATUSES,
    allowed_actions,
    awaits_operator,
    delivery_status,
    resume_step,
)

DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
_HEADER = ("parent", "route", "boundary", "status", "frontier", "age")
_NUMERIC = frozenset({"frontier", "age"})


def age_text(seconds: int) -> str:
    """A short age: ``45s``, ``12m``, ``5h``, ``3d``."""
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def _entry(summary: DeliverySummary, now: dt.datetime) -> ListedDelivery:
    status = delivery_status(summary.standings)
    unfinished = [s for s in summary.standings if resume_step(s) != "none"]
    stopper = next((s for s in unfinished if awaits_operator(s)), None)
    by_state: dict[str, int] = {}
    for standing in summary.standings:
        by_state[standing.state_name] = by_state.get(standing.state_name, 0) + standing.children
    return ListedDelivery(
        parent_id=summary.parent_id, logical_route_id=summary.logical_route_id,
        mutation_kind=summary.mutation_kind,
        boundary=Interval.of(summary.boundary_from, summary.boundary_to),
        status=status,
        blocked_code=stopper.last_error_code if stopper is not None else None,
        checkpoint_frontier=summary.checkpoint_frontier,
        children_total=summary.children_total,
        children_by_state=by_state,
        next_actions=allowed_actions(unfinished[0]) if unfinished else (),
        admitted_at=summary.admitted_at,
        age_s=int((now - summary.admitted_at).total_seconds()),
    )


def _document(summaries: Sequence[DeliverySummary], now: dt.datetime | None, journal: str,
              environment_id: str, statuses: tuple[str, ...], limit: int) -> DeliveryList:
    """``now`` is the journal clock; None when no journal file exists yet."""
    entries = [_entry(summary, now) for summary in summaries] if now is not None else []
    return DeliveryList(
        journal=journal, environment_id=environment_id, journal_exists=now is not None,
        journal_now=now, limit=limit, scanned=len(entries),
        more_may_exist=len(summaries) >= limit, statuses=statuses,
        deliveries=tuple(e for e in entries if not statuses or e.status in statuses),
    )


def _deliver_hint(locators: Locators) -> str:
    """The deliver command that writes this journal (it takes no ``--environment``)."""
    return command("deliver", "WORKLOAD", "--registry", "DIR", "--interval-start", "DATE",
                   "--interval-end", "DATE",
                   *Locators.given(journal=locators.journal).options(("journal",)))


def _text(document: DeliveryList, locators: Locators) -> str:
    where = f"journal {document.journal} (environment {document.environment_id})"
    deliveries = document.deliveries
    wanted = " or ".join(document.statuses)
    if not document.journal_exists:
        return (f"no journal at {document.journal} yet: nothing has been delivered with it; "
                f"`{_deliver_hint(locators)}` creates it")
    if not deliveries:
        if document.scanned == 0:
            return f"no deliveries in {where} yet; `{_deliver_hint(locators)}` admits one"
        return (f"no {wanted} deliveries among the {document.scanned} newest in {where}")
    rows: list[tuple[str, ...]] = []
    for entry in deliveries:
        status = entry.status.replace("_", " ")
        if entry.blocked_code:
            status += f" ({entry.blocked_code})"
        rows.append((entry.parent_id, entry.logical_route_id, entry.boundary.render(), status,
                     f"{entry.checkpoint_frontier}/{entry.children_total}",
                     age_text(entry.age_s)))
    shown = f"{len(deliveries)} {wanted + ' ' if wanted else ''}delivery(ies)"
    if document.statuses:
        shown += f" among the {document.scanned} newest"
    lines = [text_table(_HEADER, rows, _NUMERIC), "", f"{shown} in {where}, newest first"]
    if document.more_may_exist:
        lines.append(f"  only the {document.limit} newest were read: raise --limit to see "
                     "older deliveries")
    first = next((e for e in deliveries if e.status == "blocked"),
                 next((e for e in deliveries if e.status != "completed"), deliveries[0]))
    lines.append(f"  next: {inspect_command(first.parent_id, locators)}")
    return "\n".join(lines)


@click.command(name="list")
@click.option("--status", "statuses", multiple=True, type=click.Choice(DELIVERY_STATUSES),
              help="Show only deliveries with this status (repeatable).")
@control_plane_options()
@click.option("--limit", "limit", type=click.IntRange(1, MAX_LIMIT), default=DEFAULT_LIMIT,
              show_default=True, help="Read at most this many of the newest deliveries.")
@FORMAT_OPTION
def list_command(statuses: tuple[str, ...], control: ControlPlaneArgs, limit: int,
                 fmt: str) -> None:
    """List the deliveries in a journal, newest first (read-only).

    Each delivery's parent id, route, boundary, status (completed, pending on a receiver job,
    blocked until an operator acts, or in progress), checkpoint frontier and age.
    """

    def body() -> int:
        plane = resolve_control_plane(control)
        journal_url, environment_id = plane.journal, plane.environment_id
        try:
            journal = open_existing_journal(journal_url, environment_id=environment_id,
                                            operation_namespace=plane.operation_namespace)
        except DponeError as error:
            if error.code == "journal.not_found" and error.hint is None:
                # A read-only command never creates a journal: a missing one is a wrong
                # locator (a typo, another directory), not an empty journal.
                error.hint = (f"Check --journal / --registry / --environment: {redact(journal_url)} "
                              "does not exist. A journal is created by the first "
                              f"`{_deliver_hint(plane.locators)}`.")
            raise
        try:
            summaries = journal.list_deliveries(limit)
            now = journal.now()
        finally:
            close_quietly(journal)
        document = _document(summaries, now, redact(journal_url), environment_id,
                             statuses, limit)
        emit(document, fmt, lambda listing: _text(listing, plane.locators))
        return 0

    run_guarded(fmt, body)
