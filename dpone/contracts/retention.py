"""Payload retention: which sealed payloads the profile's ``retention.payload_days`` lets go.

Spec "Retention and compact effect authority": payloads may be collected much earlier than the
replay fence because they are not the fence, but only after policy permits. A parent's payload
artifacts (each child's payload bytes and its ``dpone.rest_payload.v1`` document) become
eligible when

* the parent was admitted more than its profile's ``payload_days`` ago by the JOURNAL clock
  (the value is recorded at admission; a parent admitted before it was recorded is never
  eligible), and
* every child is settled (:func:`settled`): finalized with its checkpoint promoted, or
  finalized with no effect proven. A child in flight, waiting for a retry, with an UNKNOWN,
  UNDETERMINED or partial effect, or applied but not verified keeps every payload of its parent:
  a reconciliation or a resume may still need the bytes.

Payload keys are content-addressed, so several parents can share one. A key is deleted only
when no parent that still needs it (one neither eligible nor already expired, in any
environment of the journal) references it; a shared key otherwise stays, and is listed with the
parents that keep it.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field

from dpone.contracts._axes import CheckpointState, ExecutionState, RemoteEffect, StateTuple
from dpone.contracts._base import StrictModel

RetentionStanding = Literal["eligible", "expired", "young", "unsettled", "unrecorded"]
"""Why a parent's payloads go or stay: ``eligible`` (old enough, every child settled),
``expired`` (pruned before), ``young`` (admitted ``payload_days`` ago or less), ``unsettled``
(a child may still need its bytes), ``unrecorded`` (admitted before retention was recorded)."""

PRUNE_COMMAND = "prune"
"""The operator command of the audit row each expired parent receives (``operator_prune``)."""


def settled(axes: StateTuple) -> bool:
    """True when a child can never need its payload again: finalized, and either its checkpoint
    promoted or no effect proven. Everything else (in flight, retry wait, UNKNOWN,
    UNDETERMINED, PARTIALLY_APPLIED, applied but not verified or not promoted) keeps it."""
    if axes.execution_state != ExecutionState.FINALIZED:
        return False
    return (axes.checkpoint_state == CheckpointState.PROMOTED
            or axes.remote_effect == RemoteEffect.NONE_PROVEN)


class RetainedParent(StrictModel):
    """One delivery (parent) of the environment and what retention decides for it."""

    parent_id: str
    standing: RetentionStanding
    reason: str
    """One line: why its payloads go or stay."""
    admitted_at: dt.datetime
    payload_days: Annotated[int, Field(ge=1, le=3650)] | None
    payloads_expired_at: dt.datetime | None = None
    expired_now: bool = False
    """The prune that returned this plan expired it."""
    unsettled_children: tuple[str, ...] = ()
    """The children (operation ids) that keep the payloads, when ``standing`` is unsettled."""
    keys: tuple[str, ...]
    """Every payload and payload document key its children reference, in ordinal order."""


class KeptKey(StrictModel):
    """A key of an eligible or expired parent that stays: a parent that still needs it uses it."""

    key: str
    needed_by: tuple[str, ...]
    """The parents (ids) that still need the key."""


class RetentionPlan(StrictModel):
    """What a prune of one environment deletes and keeps, decided by the journal clock."""

    environment_id: str
    journal_now: dt.datetime
    parents: tuple[RetainedParent, ...]
    """Every parent of the environment, oldest admission first."""
    delete: tuple[str, ...]
    """Keys no parent that still needs a payload references (sorted)."""
    keep: tuple[KeptKey, ...]
    """Keys of eligible or expired parents that stay (sorted by key)."""

    @property
    def eligible(self) -> tuple[RetainedParent, ...]:
        return tuple(parent for parent in self.parents if parent.standing == "eligible")
