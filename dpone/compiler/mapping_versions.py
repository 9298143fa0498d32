"""A mapping id names one layout: a changed layout under the same id is refused.

A payload mapping's id (``shop.orders.v1``) is what a receiver and a reviewer know the column
layout by; renaming, retyping, reordering or adding a column under the same id would send a
different layout under a name that promises the old one. Before a plan is written, every plan
already compiled in the plan stores a command reads (``plans/sha256/*.json``) and every
reviewed golden plan (``goldens/plans/<environment>/<workload>.json``) that names the same
mapping id must carry the same layout, else ``mapping.layout_changed`` names the mapping file,
both layout digests and the fix: a new id (``shop.orders.v2``). The layout is the columns
(name, source, type, nullable) and the sort keys; the description is not part of it.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from dpone.compiler._yaml import load_yaml_file
from dpone.contracts import DponeError, Location, content_digest
from dpone.contracts.plan import RestDeliveryPlan

_VERSION = re.compile(r"\.v([1-9][0-9]*)$")
MAX_SCANNED = 10_000
"""Plans read per store at most (the newest by modification time)."""


def layout_digest(mapping: Mapping[str, Any]) -> str:
    """The digest of a mapping's layout (its JSON form, as a plan embeds it)."""
    columns = [{"name": column.get("name"), "source": column.get("source") or column.get("name"),
                "type": column.get("type"), "nullable": column.get("nullable", True)}
               for column in mapping.get("columns", ())]
    layout = {"columns": columns, "sort_keys": list(mapping.get("sort_keys", ()))}
    return content_digest(json.dumps(layout, sort_keys=True, separators=(",", ":"))
                          .encode("utf-8"))


def _plans(root: Path) -> Iterator[Path]:
    for pattern in ("plans/sha256/*.json", "plans/*/*.json", "plans/*.json"):
        found = sorted((p for p in root.glob(pattern)
                        if pattern != "plans/*/*.json" or p.parent.name != "sha256"),
                       key=lambda p: p.stat().st_mtime, reverse=True)
        yield from found[:MAX_SCANNED]


def _stored(path: Path) -> tuple[str, str] | None:
    """``(mapping id, layout digest)`` of one stored plan; None when it is not a readable plan."""
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    mapping = document.get("mapping") if isinstance(document, dict) else None
    if (not isinstance(mapping, dict) or document.get("schema") != "dpone.rest_delivery_plan.v1"
            or not isinstance(mapping.get("id"), str)):
        return None
    return mapping["id"], layout_digest(mapping)


def _next_id(mapping_id: str) -> str:
    match = _VERSION.search(mapping_id)
    if match is None:
        return mapping_id + ".v2"
    return mapping_id[:match.start()] + f".v{int(match.group(1)) + 1}"


def check_mapping_layout(plan: RestDeliveryPlan, registry: Path, stores: Iterable[Path], *,
                         registry_display: str | None = None) -> None:
    """Refuse (``mapping.layout_changed``) ``plan`` when a plan in ``stores`` (plan stores,
    golden directories) names its mapping id with another layout."""
    mapping = plan.mapping.model_dump(mode="json", by_alias=True)
    current = layout_digest(mapping)
    for root in dict.fromkeys(stores):
        if not root.is_dir():
            continue
        for path in _plans(root):
            stored = _stored(path)
            if stored is None or stored[0] != plan.mapping.id or stored[1] == current:
                continue
            raise _changed(plan.mapping.id, registry, registry_display, path, stored[1],
                           current)


def _changed(mapping_id: str, registry: Path, registry_display: str | None, plan_file: Path,
             earlier: str, current: str) -> DponeError:
    file = registry / "mappings" / f"{mapping_id}.yaml"
    display = f"{registry_display or registry}/mappings/{mapping_id}.yaml"
    location = Location(file=display, path="columns")
    if file.is_file():
        with contextlib.suppress(DponeError):
            location = load_yaml_file(file, display).locate(("columns",))
    return DponeError(
        code="mapping.layout_changed",
        message=f"mapping {mapping_id!r} now has another column layout ({current}) than the "
                f"plan {plan_file.name} compiled with it ({earlier}); a mapping id names one "
                "layout",
        location=location,
        hint=f"Give the new layout a new id (id: {_next_id(mapping_id)} in a new file "
             f"mappings/{_next_id(mapping_id)}.yaml) and point the workload's "
             "payload.mapping_ref at it; keep the old file for the plans that use it.",
        details={"mapping_id": mapping_id, "layout_digest": current,
                 "earlier_layout_digest": earlier, "earlier_plan": str(plan_file)})


def mapping_stores(registry: Path, plans: Path | None = None) -> tuple[Path, ...]:
    """Where a command looks for earlier plans: ``plans`` (the command's plan store), the
    registry's default plan store (``<registry>/.dpone``) and its goldens."""
    stores = [registry / ".dpone", registry / "goldens"]
    return tuple(dict.fromkeys([*([plans] if plans is not None else []), *stores]))
