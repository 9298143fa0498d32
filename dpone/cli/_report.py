"""Rendering journal state for people and machines: one row per child, a plain text table.

Only journal facts and bounded receipt scalars appear: never headers, credentials, payload rows
or raw response bodies.
"""

from __future__ import annotations

from typing import Any

from dpone.contracts.journal import ChildOperation, ParentOperation
from dpone.contracts.sealed import SealedTopology

RECEIPT_FIELDS = ("id", "batch_id", "http_status", "phase", "accepted_rows", "rejected_rows",
                  "retry_after_s")


def child_row(child: ChildOperation, rows: int | None = None) -> dict[str, Any]:
    receipt = child.receipt or {}
    return {
        "ordinal": child.ordinal,
        "operation_id": child.operation_id,
        "scope": {"from": child.scope_from.isoformat(), "to": child.scope_to.isoformat()},
        "rows": rows,
        "state_name": child.state_name,
        "axes": child.axes.model_dump(mode="json"),
        "attempt_ordinal": child.attempt_ordinal,
        "observation_ordinal": child.observation_ordinal,
        "receipt": {key: receipt[key] for key in RECEIPT_FIELDS
                    if isinstance(receipt.get(key), str | int)},
        "last_error_code": child.last_error_code,
        "next_check_after": child.next_check_after.isoformat() if child.next_check_after else None,
        "delivery_key": child.delivery_key,
        "payload_key": child.payload_key,
        "payload_digest": child.payload_digest,
    }


def child_rows(parent: ParentOperation, topology: SealedTopology | None = None) -> list[dict[str, Any]]:
    counts = ({c.descriptor.ordinal: c.descriptor.row_count for c in topology.children}
              if topology is not None else {})
    return [child_row(child, counts.get(child.ordinal))
            for child in sorted(parent.children, key=lambda c: c.ordinal)]


_HEADER = ("#", "scope", "rows", "state", "effect", "ack", "verified", "checkpoint", "attempts",
           "receipt")


def _receipt_text(receipt: dict[str, Any]) -> str:
    shown = str(receipt.get("id") or receipt.get("batch_id") or "")
    if "accepted_rows" in receipt:
        shown += f" accepted={receipt['accepted_rows']}"
    if receipt.get("rejected_rows"):
        shown += f" rejected={receipt['rejected_rows']}"
    if not shown and "http_status" in receipt:
        shown = f"http {receipt['http_status']}"
    return shown.strip()


def render_table(children: list[dict[str, Any]]) -> str:
    rows = []
    for child in children:
        axes = child["axes"]
        rows.append((str(child["ordinal"]), f"[{child['scope']['from']}, {child['scope']['to']})",
                     "" if child["rows"] is None else str(child["rows"]), child["state_name"],
                     axes["remote_effect"], axes["acknowledgement_state"],
                     axes["verification_state"], axes["checkpoint_state"],
                     str(child["attempt_ordinal"]), _receipt_text(child["receipt"])))
    widths = [max(len(row[i]) for row in [_HEADER, *rows]) for i in range(len(_HEADER))]
    numeric = {0, 2, 8}

    def line(row: tuple[str, ...]) -> str:
        cells = [cell.rjust(w) if i in numeric else cell.ljust(w)
                 for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        return "  " + "  ".join(cells).rstrip()

    return "\n".join([line(_HEADER), *(line(row) for row in rows)])
