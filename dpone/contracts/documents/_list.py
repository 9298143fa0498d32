"""``dpone delivery list``: the deliveries a journal holds, newest first
(``dpone.delivery_list.v1``)."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from dpone.contracts.documents._report import Interval, Report, Timestamp

DELIVERY_LIST_SCHEMA_ID: Final = "dpone.delivery_list.v1"


class ListedDelivery(Report):
    parent_id: str
    logical_route_id: str
    mutation_kind: str
    boundary: Interval
    status: str
    """``completed``, ``pending``, ``blocked`` or ``in_progress``."""
    blocked_code: str | None
    checkpoint_frontier: int
    children_total: int
    children_by_state: dict[str, int]
    next_actions: tuple[str, ...]
    admitted_at: Timestamp
    age_s: int


class DeliveryList(Report):
    schema_id: Literal["dpone.delivery_list.v1"] = Field(default=DELIVERY_LIST_SCHEMA_ID,
                                                         alias="schema")
    journal: str
    """The journal URL, its password redacted."""
    environment_id: str
    journal_exists: bool
    journal_now: Timestamp | None
    limit: int
    scanned: int
    more_may_exist: bool
    statuses: tuple[str, ...]
    deliveries: tuple[ListedDelivery, ...]
