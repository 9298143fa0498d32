"""Rendering journal state for people and machines: one row per child, a plain text table.

Only journal facts and bounded receipt scalars appear: never headers, credentials, payload rows
or raw response bodies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dpone.cli._table import summarized
from dpone.contracts.documents import ChildRow, Interval, ReceiptScalar
from dpone.contracts.journal import ChildOperation, ParentOperation
from dpone.contracts.sealed import SealedChild

RECEIPT_FIELDS = ("id", "batch_id", "http_status", "phase", "accepted_rows", "rejected_rows",
                  "retry_after_s", "key_echo", "transport_phase", "transport_failure",
                  "transport_bound_s", "transport_cause")


def child_row(child: ChildOperation, rows: int | None = None,
              wire_bytes: int | None = None) -> ChildRow:
    """One child as the reports show it: journal facts and bounded receipt scalars only."""
    receipt = child.receipt or {}
    return ChildRow(
        ordinal=child.ordinal,
        operation_id=child.operation_id,
        scope=Interval.of(child.scope_from, child.scope_to),
        rows=rows,
        wire_bytes=wire_bytes,
        state_name=child.state_name,
        axes=child.axes,
        attempt_ordinal=child.attempt_ordinal,
        observation_ordinal=child.observation_ordinal,
        receipt={key: receipt[key] for key in RECEIPT_FIELDS
                 if isinstance(receipt.get(key), str | int)},
        last_error_code=child.last_error_code,
        empty_input=child.empty_input,
        next_check_after=child.next_check_after,
        delivery_key=child.delivery_key,
        payload_key=child.payload_key,
        payload_digest=child.payload_digest,
    )


def child_rows(parent: ParentOperation,
               sealed_children: Sequence[SealedChild] = ()) -> list[ChildRow]:
    """Every child in ordinal order with its sealed rows and wire bytes (journal facts, or the
    sealed children's when they are given)."""
    sealed = {c.descriptor.ordinal: c.descriptor for c in sealed_children}
    rows = []
    for child in sorted(parent.children, key=lambda c: c.ordinal):
        descriptor = sealed.get(child.ordinal)
        rows.append(child_row(child, descriptor.row_count if descriptor else child.row_count,
                              descriptor.wire_bytes if descriptor else child.wire_bytes))
    return rows


_HEADER = ("#", "scope", "rows", "bytes", "state", "effect", "ack", "verified", "checkpoint",
           "attempts", "receipt")
_NUMERIC = frozenset({"#", "rows", "bytes", "attempts"})


def _receipt_text(receipt: Mapping[str, ReceiptScalar]) -> str:
    shown = str(receipt.get("id") or receipt.get("batch_id") or "")
    if "accepted_rows" in receipt:
        shown += f" accepted={receipt['accepted_rows']}"
    if receipt.get("rejected_rows"):
        shown += f" rejected={receipt['rejected_rows']}"
    if receipt.get("key_echo") == "mismatch":
        shown += " key-echo-mismatch"
    if not shown and "http_status" in receipt:
        shown = f"http {receipt['http_status']}"
    if not shown and "transport_cause" in receipt:
        shown = str(receipt["transport_cause"])  # no answer: the bound that ended the wait
    return shown.strip()


_EMPTY_STATES = {"skipped": "skipped (empty)", "verified": "{} (empty)"}
_EMPTY_NOTES = {"skipped": ("skipped, nothing sent (no checkpoint of its own; the frontier "
                            "passes over it)",
                            "skipped, nothing sent (no checkpoint of their own; the frontier "
                            "passes over them)"),
                "verified": ("verified 0 of 0 rows and promoted, nothing sent",) * 2}


def _state_text(child: ChildRow) -> str:
    return _EMPTY_STATES.get(child.empty_input or "", "{}").format(child.state_name)


def _checkpoint_text(child: ChildRow) -> str:
    """A child skipped as empty input takes no checkpoint of its own (the frontier passes over
    it): ``-`` rather than the journal's BLOCKED axis, which would read as a stop."""
    return "-" if child.empty_input == "skipped" else str(child.axes.checkpoint_state)


def empty_note(children: Sequence[ChildRow]) -> str | None:
    """One summary line for the children finalized without a request because they hold no
    rows, or None when there are none."""
    counts = {kind: sum(child.empty_input == kind for child in children)
              for kind in _EMPTY_NOTES}
    parts = [f"{n} {_EMPTY_NOTES[kind][n > 1]}" for kind, n in counts.items() if n]
    return f"  empty child(ren): {'; '.join(parts)}" if parts else None


def render_table(children: Sequence[ChildRow], *, show_all: bool = True) -> str:
    """One line per child (without ``show_all``, at most 50: the first and last 25 and a count
    of the rest); the rows and bytes columns only when the sealed sizes are known."""
    sized = any(child.rows is not None for child in children)
    header = [name for name in _HEADER if sized or name not in ("rows", "bytes")]
    rows = []
    for child in children:
        axes = child.axes
        cells = {"#": str(child.ordinal),
                 "scope": child.scope.render(),
                 "rows": "" if child.rows is None else str(child.rows),
                 "bytes": "" if child.wire_bytes is None else str(child.wire_bytes),
                 "state": _state_text(child), "effect": axes.remote_effect,
                 "ack": axes.acknowledgement_state, "verified": axes.verification_state,
                 "checkpoint": _checkpoint_text(child), "attempts": str(child.attempt_ordinal),
                 "receipt": _receipt_text(child.receipt)}
        rows.append(tuple(cells[name] for name in header))
    return summarized(header, rows, _NUMERIC, show_all=show_all,
                      how="`dpone delivery inspect` or --format json shows every one")
