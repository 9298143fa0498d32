"""What one supervised delivery returns: completed, pending on a durable receipt, or blocked.

``DeliveryPending`` is returned only after the receipt and its next-check bound are durable in
the journal; its one continuation is the read-only ``poll_receipt``.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from dpone.contracts import ERROR_CATALOG, RemoteEffect, StrictModel


class ChildReceipt(StrictModel):
    """One finished child: its journal state and the counters its response carried."""

    operation_id: str
    ordinal: int
    state_name: str
    attempt_ordinal: int
    receipt: dict[str, str | int]


class DeliveryCompleted(StrictModel):
    """Every child is finalized with its full effect verified and the frontier promoted."""

    kind: Literal["completed"] = "completed"
    parent_id: str
    checkpoint_frontier: int
    children: tuple[ChildReceipt, ...]
    """Each child as the journal holds it once the frontier is promoted."""
    children_total: int | None = None
    rows_total: int | None = None
    """The sealed rows of every child."""
    boundary_from: dt.date | None = None
    boundary_to: dt.date | None = None
    plan_digest: str | None = None


class DeliveryBlocked(StrictModel):
    """The delivery stopped: a stable code, the remote-effect certainty and retained evidence.

    ``evidence`` holds bounded scalars only (journal state, attempt, transport phase, counters);
    ``allowed_actions`` names what an operator may do next. Nothing here authorizes a resend.
    """

    kind: Literal["blocked"] = "blocked"
    code: str
    parent_id: str
    operation_id: str | None
    remote_effect: RemoteEffect
    evidence: dict[str, str | int]
    allowed_actions: tuple[str, ...]
    checkpoint_frontier: int

    @property
    def operator_action(self) -> str:
        """The catalog's operator action for ``code``."""
        return ERROR_CATALOG[self.code].operator_action


class DeliveryPending(StrictModel):
    """One asynchronous child holds a durable receipt; observe it again after ``next_check_after``.

    The only continuation is ``poll_receipt`` under an observation lease: nothing is resent.
    """

    kind: Literal["pending"] = "pending"
    continuation_kind: Literal["poll_receipt"] = "poll_receipt"
    parent_id: str
    operation_id: str
    ordinal: int
    state_name: str
    receipt: dict[str, str | int]
    next_check_after: dt.datetime | None
    checkpoint_frontier: int
    children_total: int


DeliveryResult = DeliveryCompleted | DeliveryPending | DeliveryBlocked
