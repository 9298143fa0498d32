"""The response scalars an observation keeps: only those the profile allowlists.

``observability.evidence_scalars`` names top-level members of a JSON answer about the job (the
spec: "only allowlisted bounded response scalars are embedded"). An observation records, under
``evidence_scalars``, each named member whose value is a string or an integer, read within the
profile's response bounds; any other member of the answer, a listed member holding a
structure, a boolean or null, and every member of an answer about another key's job, is never
recorded. The fixed scalars (HTTP status, phase, counters, key echo, outcome) are recorded as
before.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpone.contracts.profile import ResponseBounds
from dpone.contracts.transport import Response
from dpone.executor.transport import ExtractionError, parse_bounded_json


def evidence_scalars(names: Sequence[str], response: Response,
                     bounds: ResponseBounds) -> dict[str, str | int]:
    """The allowlisted string and integer members of ``response``'s JSON object body."""
    if not names or response.headers.get("content-encoding", "identity").strip().lower() not in (
            "", "identity"):
        return {}
    try:
        document = parse_bounded_json(response.body, bounds)
    except ExtractionError:
        return {}
    if not isinstance(document, dict):
        return {}
    kept: dict[str, str | int] = {}
    for name in names:
        value = document.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool):
            kept[name] = value
    return kept
