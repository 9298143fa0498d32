"""What `dpone deliver` and `dpone delivery resume` share: the lazy transport, the progress
lines, the ``dpone.delivery_result.v1`` document, its text summary and the exit code."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import click

from dpone.cli._inputs import close_quietly, open_journal
from dpone.cli._output import emit_json
from dpone.cli._report import empty_note, render_table
from dpone.contracts import ERROR_CATALOG
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedChild, SealedTopology
from dpone.executor.supervisor import DeliveryBlocked, DeliveryPending, DeliveryResult
from dpone.executor.transport import (
    OutboundRequest,
    RestTransportPort,
    TransportOutcome,
    transport_for,
)


def holder() -> str:
    """The lease holder of this process."""
    return f"dpone-cli:{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class SealedShape:
    """What the summary shows of a sealed delivery: its boundary, children and row total."""

    boundary_from: dt.date
    boundary_to: dt.date
    children: tuple[SealedChild, ...]
    rows_total: int

    @classmethod
    def of_topology(cls, topology: SealedTopology) -> SealedShape:
        return cls(topology.coverage.boundary_from, topology.coverage.boundary_to,
                   topology.children, topology.total_rows)


class StepPrinter:
    """One stderr line per journal step: the child, its scope and the state it reached."""

    def __init__(self, shape: SealedShape) -> None:
        self._total = len(shape.children)
        self._scopes = {c.descriptor.ordinal: f"[{c.descriptor.scope_from}, {c.descriptor.scope_to})"
                        for c in shape.children}

    def __call__(self, operation: ChildOperation, transition_id: str) -> None:
        receipt = operation.receipt or {}
        shown = receipt.get("id") or receipt.get("batch_id") or ""
        phase = f" phase={receipt['phase']}" if "phase" in receipt else ""
        attempt = f" attempt {operation.attempt_ordinal}" if transition_id == "enter_submitting" else ""
        click.echo(f"  child {operation.ordinal}/{self._total} {self._scopes[operation.ordinal]} "
                   f"{operation.state_name}{attempt}{phase} {shown}".rstrip(), err=True)


class LazyTransport:
    """The plan's transport, built (and its credential resolved) on the first request."""

    def __init__(self, build: Callable[[], RestTransportPort]) -> None:
        self._build = build
        self._inner: RestTransportPort | None = None

    def send(self, request: OutboundRequest) -> TransportOutcome:
        if self._inner is None:
            self._inner = self._build()
        return self._inner.send(request)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()


@contextlib.contextmanager
def delivery_ports(plan: RestDeliveryPlan, journal_url: str, *, environment_id: str,
                   announce: str) -> Iterator[tuple[DeliveryJournalPort, LazyTransport]]:
    """The journal (migrated) and the plan's transport for one run, both closed after it.

    The credential resolves on the first request, so every journal check (admission, intent
    conflict, sealed documents) is done before any secret is read. ``announce`` is printed on
    stderr with the receiver authority and profile.
    """
    tier = plan.environment.snapshot.tier
    with contextlib.ExitStack() as stack:
        journal = open_journal(journal_url, environment_id=environment_id, tier=tier)
        stack.callback(close_quietly, journal)
        transport = LazyTransport(lambda: transport_for(plan))
        stack.callback(transport.close)
        click.echo(f"{announce} to {plan.binding.snapshot.authority} "
                   f"({plan.profile.snapshot.ref})", err=True)
        yield journal, transport


def result_document(result: DeliveryResult, shape: SealedShape,
                    children: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``dpone.delivery_result.v1`` document of ``result``."""
    document: dict[str, Any] = {
        "schema": "dpone.delivery_result.v1", "status": result.kind,
        "parent_id": result.parent_id, "checkpoint_frontier": result.checkpoint_frontier,
        "children_total": len(shape.children), "rows_total": shape.rows_total,
        "boundary": {"from": shape.boundary_from.isoformat(),
                     "to": shape.boundary_to.isoformat()},
        "children": children}
    if isinstance(result, DeliveryBlocked):
        spec = ERROR_CATALOG[result.code]
        document["blocked"] = {"code": result.code, "operation_id": result.operation_id,
                               "remote_effect": result.remote_effect.value,
                               "evidence": result.evidence,
                               "allowed_actions": list(result.allowed_actions),
                               "operator_action": spec.operator_action,
                               "exit_code": int(spec.exit_class)}
    if isinstance(result, DeliveryPending):
        document["pending"] = {"operation_id": result.operation_id, "ordinal": result.ordinal,
                               "continuation_kind": result.continuation_kind,
                               "next_check_after": result.next_check_after.isoformat()
                               if result.next_check_after else None}
    return document


def result_text(document: dict[str, Any], result: DeliveryResult, rerun: str) -> str:
    """The summary for people; ``rerun`` says how to keep observing a pending receipt."""
    boundary = document["boundary"]
    lines = [render_table(document["children"]), ""]
    head = (f"{result.kind}: [{boundary['from']}, {boundary['to']}) "
            f"{document['rows_total']} rows in {document['children_total']} child(ren); "
            f"frontier {result.checkpoint_frontier}/{document['children_total']}")
    lines.append(head)
    lines += [note for note in (empty_note(document["children"]),) if note]
    lines.append(f"  parent {result.parent_id}")
    if isinstance(result, DeliveryBlocked):
        blocked = document["blocked"]
        lines += [f"  {result.code}: remote effect {blocked['remote_effect']}",
                  f"  operation {result.operation_id}",
                  f"  hint: {blocked['operator_action']}",
                  f"  allowed next actions: {', '.join(result.allowed_actions)}",
                  f"  next: dpone delivery inspect --operation-id {result.operation_id}"]
    elif isinstance(result, DeliveryPending):
        lines += [f"  child {result.ordinal} holds receipt {result.receipt.get('id', '')}; "
                  f"next check after {document['pending']['next_check_after']}",
                  f"  next: {rerun} to keep observing; nothing is resent"]
    else:
        lines.append(f"  next: dpone delivery inspect --operation-id {result.parent_id}")
    return "\n".join(lines)


def exit_code(result: DeliveryResult) -> int:
    """0 completed or pending; a blocked result exits with its code's class."""
    if isinstance(result, DeliveryBlocked):
        return int(ERROR_CATALOG[result.code].exit_class)
    return 0


def emit_result(result: DeliveryResult, shape: SealedShape, children: list[dict[str, Any]],
                fmt: str, rerun: str) -> int:
    """Write the result (JSON document or text summary) to stdout; returns the exit code."""
    document = result_document(result, shape, children)
    if fmt == "json":
        emit_json(document)
    else:
        click.echo(result_text(document, result, rerun))
    return exit_code(result)
