"""``dpone seal``: the frozen parent and every sealed child (``dpone.seal_result.v1``)."""

from __future__ import annotations

import datetime as dt
from typing import Final, Literal

from pydantic import Field

from dpone.contracts._base import Digest
from dpone.contracts.documents._report import Interval, Report

SEAL_RESULT_SCHEMA_ID: Final = "dpone.seal_result.v1"


class SealedScope(Report):
    """A child's days ``[from, to)`` and, when a day is split into row parts, which part."""

    from_date: dt.date = Field(alias="from")
    to_date: dt.date = Field(alias="to")
    part: int
    parts: int


class SealedChildSummary(Report):
    ordinal: int
    scope: SealedScope
    rows: int
    decoded_bytes: int
    wire_bytes: int
    payload_digest: Digest
    payload_key: str
    document_key: str
    delivery_key: Digest
    receiver_mutation_key: Digest
    mutation_intent_digest: Digest


class SealResult(Report):
    """``dpone seal --format json``: what was frozen and sealed (create-if-absent)."""

    schema_id: Literal["dpone.seal_result.v1"] = Field(default=SEAL_RESULT_SCHEMA_ID,
                                                       alias="schema")
    status: Literal["ok"] = "ok"
    parent_digest: Digest
    plan_digest: Digest
    parent_plan_digest: Digest
    boundary: Interval
    rows: int
    child_count: int
    children: tuple[SealedChildSummary, ...]
