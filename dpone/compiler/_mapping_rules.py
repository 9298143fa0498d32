"""Mapping and limit rules checked on the raw document, so each error points at its entry."""

from __future__ import annotations

from typing import Any

from dpone.compiler._yaml import LoadedDocument
from dpone.contracts import DponeError


def check_raw_mapping(doc: LoadedDocument) -> None:
    columns = doc.data.get("columns")
    if not isinstance(columns, list):
        return
    seen: dict[str, int] = {}
    for index, column in enumerate(columns):
        name = column.get("name") if isinstance(column, dict) else None
        if not isinstance(name, str):
            continue
        if name in seen:
            raise DponeError(code="schema.invalid_value",
                             message=f"column {name!r} is mapped twice (columns[{seen[name]}] and "
                             f"columns[{index}])", location=doc.locate(("columns", index, "name")))
        seen[name] = index
    sort_keys = doc.data.get("sort_keys")
    for index, key in enumerate(sort_keys if isinstance(sort_keys, list) else []):
        if isinstance(key, str) and key not in seen:
            raise DponeError(code="schema.invalid_value",
                             message=f"sort key {key!r} is not a mapped column",
                             location=doc.locate(("sort_keys", index)),
                             hint=f"use one of: {', '.join(seen)}")


def check_raw_limits(doc: LoadedDocument) -> None:
    """Planning limits may not exceed their hard limits: point at the planning entry."""
    limits: Any = doc.data.get("limits")
    if not isinstance(limits, dict):
        return
    for planning, hard in (("planning_decoded_bytes", "max_decoded_bytes"),
                           ("planning_wire_bytes", "max_wire_bytes"), ("planning_rows", "max_rows")):
        low, high = limits.get(planning), limits.get(hard)
        if isinstance(low, int) and isinstance(high, int) and low > high:
            raise DponeError(code="schema.invalid_value",
                             message=f"{planning} ({low}) exceeds {hard} ({high})",
                             location=doc.locate(("limits", planning)),
                             hint="planning limits are targets below the receiver's hard limits")
