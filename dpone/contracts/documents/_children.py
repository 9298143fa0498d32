"""One child as every delivery report shows it: journal facts and bounded receipt scalars only
(never headers, credentials, payload rows or raw response bodies)."""

from __future__ import annotations

from dpone.contracts._axes import StateTuple
from dpone.contracts._base import Digest
from dpone.contracts.documents._report import Interval, Report, Timestamp

ReceiptScalar = str | int | bool


class ChildRow(Report):
    """One child of a delivery, in ordinal order; ``rows`` and ``wire_bytes`` are the sealed
    sizes when the report knows them (``null`` otherwise)."""

    ordinal: int
    operation_id: str
    scope: Interval
    rows: int | None
    wire_bytes: int | None
    state_name: str
    axes: StateTuple
    attempt_ordinal: int
    observation_ordinal: int
    receipt: dict[str, ReceiptScalar]
    """The receipt's bounded scalars (id, batch_id, http_status, phase, counters, key_echo)."""
    last_error_code: str | None
    empty_input: str | None
    """How the child was finalized without a request because it holds no rows, if it was."""
    next_check_after: Timestamp | None
    delivery_key: Digest
    payload_key: str
    payload_digest: Digest
