"""``dpone.mutation_gate.v1``: what `dpone admin gate` shows or changed."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from dpone.contracts.documents._report import Report, Timestamp

MUTATION_GATE_SCHEMA_ID: Final = "dpone.mutation_gate.v1"


class MutationGateDocument(Report):
    schema_id: Literal["dpone.mutation_gate.v1"] = Field(default=MUTATION_GATE_SCHEMA_ID,
                                                         alias="schema")
    journal: str
    """The journal URL, its password redacted."""
    environment_id: str
    mutation_gate: Literal["OPEN", "BLOCKED"]
    """BLOCKED: no new mutation anywhere in the environment (no SUBMITTING); inspection, receipt
    observation and reconciliation stay available."""
    journal_epoch: int
    reason: str | None
    updated_by: str | None
    updated_at: Timestamp | None
    changed: bool
    """True when this command changed the gate (block or open), False for `show`."""
    next_commands: tuple[str, ...]
