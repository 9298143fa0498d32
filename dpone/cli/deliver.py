"""`dpone deliver`: freeze, seal, admit and deliver one source boundary to its receiver."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._inputs import (
    DEFAULT_JOURNAL,
    boundary_options,
    close_quietly,
    freeze_and_seal,
    load_plan,
    open_journal,
)
from dpone.cli._output import FORMAT_OPTION, emit_json, run_guarded
from dpone.cli._report import child_rows, render_table
from dpone.contracts import ERROR_CATALOG
from dpone.contracts.journal import ChildOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.supervisor import (
    DeliveryBlocked,
    DeliveryPending,
    DeliveryResult,
    check_profile,
    deliver,
)
from dpone.executor.transport import (
    OutboundRequest,
    RestTransportPort,
    TransportOutcome,
    transport_for,
)


def _holder() -> str:
    return f"dpone-cli:{socket.gethostname()}:{os.getpid()}"


class _StepPrinter:
    """One stderr line per journal step: the child, its scope and the state it reached."""

    def __init__(self, topology: SealedTopology) -> None:
        self._total = len(topology.children)
        self._scopes = {c.descriptor.ordinal: f"[{c.descriptor.scope_from}, {c.descriptor.scope_to})"
                        for c in topology.children}

    def __call__(self, operation: ChildOperation, transition_id: str) -> None:
        receipt = operation.receipt or {}
        shown = receipt.get("id") or receipt.get("batch_id") or ""
        phase = f" phase={receipt['phase']}" if "phase" in receipt else ""
        attempt = f" attempt {operation.attempt_ordinal}" if transition_id == "enter_submitting" else ""
        click.echo(f"  child {operation.ordinal}/{self._total} {self._scopes[operation.ordinal]} "
                   f"{operation.state_name}{attempt}{phase} {shown}".rstrip(), err=True)


class _LazyTransport:
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


def _empty(plan: RestDeliveryPlan, topology: SealedTopology, fmt: str) -> int:
    """No rows in the boundary: nothing is admitted or sent (the profile's empty_input policy)."""
    policy = plan.profile.snapshot.result_policy.empty_input
    boundary = {"from": topology.coverage.boundary_from.isoformat(),
                "to": topology.coverage.boundary_to.isoformat()}
    if fmt == "json":
        emit_json({"schema": "dpone.delivery_result.v1", "status": "empty", "boundary": boundary,
                   "empty_input": policy, "children_total": 0, "rows_total": 0, "children": []})
    else:
        click.echo(f"empty: [{boundary['from']}, {boundary['to']}) holds no rows; nothing was "
                   f"admitted or sent (empty_input: {policy})")
    return 0


def _document(result: DeliveryResult, topology: SealedTopology,
              children: list[dict[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": "dpone.delivery_result.v1", "status": result.kind,
        "parent_id": result.parent_id, "checkpoint_frontier": result.checkpoint_frontier,
        "children_total": len(topology.children), "rows_total": topology.total_rows,
        "boundary": {"from": topology.coverage.boundary_from.isoformat(),
                     "to": topology.coverage.boundary_to.isoformat()},
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


def _text(document: dict[str, Any], result: DeliveryResult) -> str:
    boundary = document["boundary"]
    lines = [render_table(document["children"]), ""]
    head = (f"{result.kind}: [{boundary['from']}, {boundary['to']}) "
            f"{document['rows_total']} rows in {document['children_total']} child(ren); "
            f"frontier {result.checkpoint_frontier}/{document['children_total']}")
    lines.append(head)
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
                  "  next: run the same command again (or add --wait) to keep observing; "
                  "nothing is resent"]
    else:
        lines.append(f"  next: dpone delivery inspect --operation-id {result.parent_id}")
    return "\n".join(lines)


def _exit_code(result: DeliveryResult) -> int:
    if isinstance(result, DeliveryBlocked):
        return int(ERROR_CATALOG[result.code].exit_class)
    return 0


@click.command(name="deliver")
@boundary_options
@click.option("--journal", "journal_url", default=DEFAULT_JOURNAL, show_default=True,
              help="Journal: a SQLite file (local development) or postgresql://... URL.")
@click.option("--wait/--no-wait", "wait", default=False, show_default=True,
              help="Keep observing asynchronous jobs in-process until every child is terminal.")
@FORMAT_OPTION
def deliver_command(target: str, registry: Path, interval_start: dt.datetime,
                    interval_end: dt.datetime, journal_url: str, artifacts_url: str,
                    plans: Path, wait: bool, fmt: str) -> None:
    """Deliver [--interval-start, --interval-end) through the plan's operation profile.

    Freezes and seals the boundary (create-if-absent), admits the whole child topology in one
    journal transaction, then submits, observes, verifies and promotes each child. Running it
    again resumes from the journal: nothing that may have reached the receiver is resent.
    Exit 0 delivered or pending on a durable receipt, 2 invalid or intent conflict,
    3 unavailable, 4 remote effect unknown or partial, 5 proven terminal receiver failure.
    """

    def body() -> int:
        plan, plan_digest = load_plan(target, registry, plans, persist=True)
        check_profile(plan)
        environment = plan.environment.snapshot
        store = open_artifact_store(artifacts_url)
        _parent, topology = freeze_and_seal(plan, plan_digest, registry, interval_start.date(),
                                            interval_end.date(), store)
        if not topology.children:
            return _empty(plan, topology, fmt)
        with contextlib.ExitStack() as stack:
            journal = open_journal(journal_url, environment_id=environment.environment_id,
                                   tier=environment.tier)
            stack.callback(close_quietly, journal)
            # The credential resolves on the first request: after admission, so an intent
            # conflict is refused before any secret is read.
            transport = _LazyTransport(lambda: transport_for(plan))
            stack.callback(transport.close)
            click.echo(f"delivering {len(topology.children)} child(ren) to "
                       f"{plan.binding.snapshot.authority} ({plan.profile.snapshot.ref})", err=True)
            result = deliver(plan, topology, journal, store, transport, holder=_holder(),
                             wait=wait, observer=_StepPrinter(topology))
            children = child_rows(journal.load_parent(result.parent_id), topology)
        document = _document(result, topology, children)
        if fmt == "json":
            emit_json(document)
        else:
            click.echo(_text(document, result))
        return _exit_code(result)

    run_guarded(fmt, body)

