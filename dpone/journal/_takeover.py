"""The takeover of a lost submit by a certified same-key replay: what the journal proves.

A child a lost run left in SUBMITTING (or in a fenced replay) has no recorded outcome, and the
lease that entered its latest attempt is gone (the new mutation lease could not be taken
otherwise). That expiry authorizes nothing by itself. The journal replays the same key only
when the parent was admitted with a certified fence *and* a certified key retention
(``replay_retention_s``: a certification PASSes key binding and key retention), the child's
first attempt is younger than that retention by the journal clock, and the next attempt is
within the admitted budget. Anything else refuses with ``REST_DELIVERY_UNSAFE_RETRY`` before a
marker exists, and the takeover records the effect UNKNOWN instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpone.contracts._errors import DponeError
from dpone.contracts.journal import Lease
from dpone.journal._rows import AttemptRow, ChildRow, ParentRow
from dpone.journal._unit import UnitOfWork


@dataclass(frozen=True, slots=True)
class Takeover:
    """A lost submit the journal lets a new mutation lease replay."""

    previous: AttemptRow
    """The lost run's latest attempt: its outcome is recorded when the replay enters."""
    age_s: float
    """The child's first attempt's age by the journal clock."""


def _unsafe(row: ChildRow, message: str, **details: object) -> DponeError:
    return DponeError(code="REST_DELIVERY_UNSAFE_RETRY", operation_id=row.operation_id,
                      message=message, details=dict(details),
                      hint="The takeover records the child's effect UNKNOWN: `dpone delivery "
                           "reconcile` with the receiver's word settles it.")


def takeover(tx: UnitOfWork, row: ChildRow, parent: ParentRow, lease: Lease,
             attempt_ordinal: int) -> Takeover:
    """Whether the holder of ``lease`` may replay the lost submit of ``row`` as attempt
    ``attempt_ordinal`` now; refused otherwise (see the module doc)."""
    stored = tx.one("latest_attempt", operation_id=row.operation_id)
    previous = AttemptRow.decode(stored) if stored is not None else None
    if not row.submitting or previous is None or previous.outcome is not None:
        raise DponeError(code="journal.illegal_transition", operation_id=row.operation_id,
                         message=f"{row.state_name} is no submit left without an outcome: "
                         "nothing to take over")
    if (previous.lease_holder, previous.lease_token) == (lease.holder, lease.token):
        raise DponeError(code="journal.illegal_transition", operation_id=row.operation_id,
                         message="the lease that entered the attempt replays it in-process; a "
                         "takeover is another lease's")
    retention = parent.replay_retention_s
    if not parent.replay_fence_certified or retention is None:
        raise _unsafe(row, "the delivery was admitted without a certified key retention (no "
                      "certification PASSes key binding and key retention): a lost submit is "
                      "never replayed")
    first = tx.one("first_attempt", operation_id=row.operation_id)
    started = tx.codec.moment(first["started_at"]) if first is not None else tx.now()
    age = max((tx.now() - started).total_seconds(), 0.0)
    if age > retention:
        raise _unsafe(row, f"the child's first attempt is {age:.0f} s old, beyond the "
                      f"{retention} s the receiver is certified to keep its key: a replay could "
                      "apply it twice", first_attempt_age_s=round(age, 1),
                      certified_retention_s=retention)
    if attempt_ordinal > parent.max_submit_attempts:
        raise _unsafe(row, f"attempt {attempt_ordinal} exceeds the {parent.max_submit_attempts} "
                      "submit attempt(s) admitted for this delivery",
                      max_submit_attempts=parent.max_submit_attempts)
    return Takeover(previous=previous, age_s=age)
