"""``dpone.payload_prune.v1``: what `dpone admin prune` would delete (preview) or deleted
(``--apply``) under the profiles' ``retention.payload_days``, and why each delivery's payloads
go or stay."""

from __future__ import annotations

from typing import ClassVar, Final, Literal

from pydantic import Field

from dpone.contracts.documents._report import Report, Timestamp

PAYLOAD_PRUNE_SCHEMA_ID: Final = "dpone.payload_prune.v1"


class PruneParent(Report):
    """One delivery (parent) of the environment and what retention decides for it."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"payloads_expired_at", "unsettled_children"})

    parent_id: str
    standing: Literal["eligible", "expired", "young", "unsettled", "unrecorded"]
    """``eligible``: its payloads go now; ``expired``: they went (now or before); ``young``:
    admitted ``payload_days`` ago or less (journal clock); ``unsettled``: a child may still need
    them; ``unrecorded``: admitted before payload retention was recorded (kept)."""
    reason: str
    admitted_at: Timestamp
    payload_days: int | None
    keys: int
    """How many payload and payload document keys its children reference."""
    payloads_expired_at: Timestamp | None = None
    unsettled_children: tuple[str, ...] = ()


class PruneKeptKey(Report):
    """A key of a delivery whose payloads go that stays: a delivery that still needs it uses it
    (keys are content-addressed and can be shared)."""

    key: str
    needed_by: tuple[str, ...]


class PayloadPruneDocument(Report):
    schema_id: Literal["dpone.payload_prune.v1"] = Field(default=PAYLOAD_PRUNE_SCHEMA_ID,
                                                         alias="schema")
    journal: str
    """The journal URL, its password redacted."""
    artifacts: str
    """The artifact store URL, its password redacted."""
    environment_id: str
    applied: bool
    """False: a preview (nothing written or deleted); True: the journal recorded the expiry
    and the keys in ``deleted`` were deleted."""
    journal_now: Timestamp
    """The journal clock the ages were decided by."""
    parents: tuple[PruneParent, ...]
    """Every delivery of the environment, oldest admission first."""
    deleted: tuple[str, ...]
    """Keys deleted (``applied``) or that ``--apply`` deletes (preview)."""
    already_absent: tuple[str, ...]
    """Keys of expired or eligible deliveries the store no longer holds."""
    kept: tuple[PruneKeptKey, ...]
    next_commands: tuple[str, ...]
