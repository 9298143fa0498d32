"""Golden plans: one reviewable file per workload and environment.

A plan store names each plan by its digest and holds it as one canonical JSON line: right for
the executor, useless in a pull request. A golden is the same document pretty-printed (two-space
indent, sorted keys, one trailing newline) under ``<environment>/<workload>.json``, so a change
shows as a few lines of a stable file. Its canonical form is the plan's: the digest of a golden
re-serialized canonically is the plan digest (:func:`read_plan_file` checks any plan file so).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from dpone.contracts import DponeError, Location, canonical_json, content_digest
from dpone.contracts.plan import RestDeliveryPlan


def golden_text(canonical: bytes) -> str:
    """The golden form of a plan's canonical bytes."""
    return json.dumps(json.loads(canonical), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def golden_name(plan: RestDeliveryPlan) -> str:
    """Where a plan's golden lives under a golden directory: ``<environment>/<workload>.json``."""
    return f"{plan.environment.ref}/{plan.logical_route_id}.json"


def golden_files(directory: Path) -> dict[str, Path]:
    """Every golden under ``directory`` by its name (:func:`golden_name`)."""
    if not directory.is_dir():
        return {}
    return {path.relative_to(directory).as_posix(): path
            for path in sorted(directory.glob("*/*.json"))}


def read_plan_file(path: Path) -> tuple[RestDeliveryPlan, str]:
    """A plan file in any layout (a plan store's canonical line or a golden) and its digest:
    the digest of its canonical form."""
    try:
        document = json.loads(path.read_bytes())
    except ValueError as error:
        raise DponeError(code="contract.schema_invalid",
                         message=f"{path} is not JSON: {error}",
                         location=Location(file=str(path))) from error
    try:
        plan = RestDeliveryPlan.model_validate_json(json.dumps(document))
    except ValidationError as error:
        raise DponeError(code="contract.schema_invalid",
                         message=f"{path} is not a dpone.rest_delivery_plan.v1: "
                                 f"{error.error_count()} error(s)",
                         location=Location(file=str(path)),
                         hint="Name a plan file (plans/sha256/<hex>.json or a golden plan)."
                         ) from error
    return plan, content_digest(canonical_json(document))
