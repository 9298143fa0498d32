"""``dpone.revocation_list.v1``: what `dpone admin revocations|revoke|unrevoke` shows or
changed."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from dpone.contracts.documents._report import Report, Timestamp

REVOCATION_LIST_SCHEMA_ID: Final = "dpone.revocation_list.v1"


class RevokedEntry(Report):
    """One entry of the deny-only list: no new submit of a plan that uses it."""

    kind: Literal["profile", "binding"]
    ref: str
    """A profile ``id@version`` or a binding ``id``."""
    reason: str
    revoked_by: str
    revoked_at: Timestamp


class RevocationHistoryEntry(Report):
    """One audited change of the list."""

    action: Literal["revoke", "unrevoke"]
    kind: Literal["profile", "binding"]
    ref: str
    reason: str
    actor: str
    at: Timestamp


class RevocationChangeSummary(Report):
    """What this command asked for, and whether the list changed (False: it already stood so,
    nothing was written)."""

    action: Literal["revoke", "unrevoke"]
    kind: Literal["profile", "binding"]
    ref: str
    changed: bool


class RevocationListDocument(Report):
    OPTIONAL = frozenset({"change"})

    schema_id: Literal["dpone.revocation_list.v1"] = Field(default=REVOCATION_LIST_SCHEMA_ID,
                                                           alias="schema")
    journal: str
    """The journal URL, its password redacted."""
    environment_id: str
    revoked: tuple[RevokedEntry, ...]
    """The current list: every new submit of a plan using one of these is refused
    (inspection, receipt observation and reconciliation stay available)."""
    history: tuple[RevocationHistoryEntry, ...]
    """The newest audited changes, newest first."""
    change: RevocationChangeSummary | None = None
    """Only from `revoke` and `unrevoke`."""
    next_commands: tuple[str, ...]
