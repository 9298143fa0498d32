"""The deny-only revocation list of an environment's journal (spec "Platform operation
profile": a separate mutable authority that can prevent every new submit using a compromised
profile or binding; it cannot enable a behaviour, reinterpret a pinned plan, or prevent
read-only observation and reconciliation).

An entry names an operation profile by ``id@version`` or a connection binding by ``id``. The
journal refuses every new SUBMITTING of a child whose admitted plan uses a revoked one; every
revoke and unrevoke is an audit row (``revocation_revoke`` / ``revocation_unrevoke``).
"""

from __future__ import annotations

import datetime as dt
from typing import Final, Literal

from pydantic import TypeAdapter, model_validator

from dpone.contracts._base import Name, StrictModel
from dpone.contracts.workload import ProfileRef

RevocationKind = Literal["profile", "binding"]
RevocationAction = Literal["revoke", "unrevoke"]
REVOCATION_TRANSITIONS: Final[dict[RevocationAction, str]] = {
    "revoke": "revocation_revoke", "unrevoke": "revocation_unrevoke"}
"""The audit row's transition id of each change."""
MAX_REVOCATION_HISTORY: Final = 50
"""How many of the newest audited changes a listing shows."""

_REFS: Final[dict[RevocationKind, TypeAdapter[str]]] = {
    "profile": TypeAdapter(ProfileRef), "binding": TypeAdapter(Name)}
"""How each kind's ref is written: a profile ``id@version`` (as a workload's
``operation_profile_ref`` and a plan's ``profile.ref``), a binding ``id`` (a plan's
``binding.ref``)."""


class RevocationTarget(StrictModel):
    """What one entry denies: a profile ``id@version`` or a binding ``id``."""

    kind: RevocationKind
    ref: str

    @model_validator(mode="after")
    def _ref_of_its_kind(self) -> RevocationTarget:
        _REFS[self.kind].validate_python(self.ref)
        return self


class Revocation(RevocationTarget):
    """One entry of the list: who revoked it, when (journal clock) and why."""

    reason: str
    revoked_by: str
    revoked_at: dt.datetime


class RevocationChange(RevocationTarget):
    """One audited change of the list."""

    action: RevocationAction
    reason: str
    actor: str
    at: dt.datetime


class RevocationStatus(StrictModel):
    """The environment's current list and its newest audited changes (newest first)."""

    environment_id: str
    revoked: tuple[Revocation, ...]
    history: tuple[RevocationChange, ...]
