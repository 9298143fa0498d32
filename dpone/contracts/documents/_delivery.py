"""``dpone deliver`` and ``dpone delivery resume --apply``: how a run ended
(``dpone.delivery_result.v1``), one model per ``status``."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import Field

from dpone.contracts._axes import RemoteEffect
from dpone.contracts._base import Digest
from dpone.contracts._errors import Retryability
from dpone.contracts.documents._children import ChildRow
from dpone.contracts.documents._report import Interval, Report, Timestamp

DELIVERY_RESULT_SCHEMA_ID: Final = "dpone.delivery_result.v1"


class SourceChange(Report):
    """The source bytes differ from the last seal of the same plan and boundary."""

    sealed_parent_digest: Digest
    sealed_rows: int
    seal_record: str
    frozen_parent_digest: Digest
    frozen_rows: int


class _Outcome(Report):
    """Every status: the boundary, its children and row total.

    ``source_changed_since_seal`` is written by ``dpone deliver`` only (``null`` when the source
    is the one last sealed), never by ``resume``, which reads no source."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"source_changed_since_seal"})

    schema_id: Literal["dpone.delivery_result.v1"] = Field(default=DELIVERY_RESULT_SCHEMA_ID,
                                                           alias="schema")
    boundary: Interval
    children_total: int
    rows_total: int
    children: tuple[ChildRow, ...]
    source_changed_since_seal: SourceChange | None = None


class _Admitted(_Outcome):
    """A delivery the journal admitted: its id, frontier and the one command to run next."""

    parent_id: str
    checkpoint_frontier: int
    next_command: str


class CompletedResult(_Admitted):
    status: Literal["completed"] = "completed"


class PendingSection(Report):
    """The asynchronous child that holds a durable receipt; observing it resends nothing."""

    operation_id: str
    ordinal: int
    continuation_kind: Literal["poll_receipt"]
    next_check_after: Timestamp | None
    children_observing: int = 0
    """Children that hold a durable receipt and are observed read-only (this one included)."""
    children_not_submitted: int = 0
    """Children not sent yet: `delivery resume --apply` submits them once a remote job slot
    frees (the profile's max_active_remote_jobs)."""


class PendingResult(_Admitted):
    status: Literal["pending"] = "pending"
    pending: PendingSection


class BlockedSection(Report):
    """The child whose own outcome stopped the delivery, and what an operator may do."""

    code: str
    operation_id: str | None
    remote_effect: RemoteEffect
    evidence: dict[str, str | int]
    allowed_actions: tuple[str, ...]
    operator_action: str
    exit_code: int


class BlockedResult(_Admitted):
    status: Literal["blocked"] = "blocked"
    blocked: BlockedSection


class StoppedSection(Report):
    """The error of the run's environment that stopped an admitted delivery (the journal keeps
    every child's state)."""

    code: str
    message: str
    operation_id: str | None
    hint: str
    exit_code: int
    retryability: Retryability
    details: dict[str, Any]


class StoppedResult(_Admitted):
    status: Literal["stopped"] = "stopped"
    stopped: StoppedSection


class EmptyResult(_Outcome):
    """The boundary holds no rows: nothing was admitted or sent (the profile's
    ``empty_input`` policy)."""

    status: Literal["empty"] = "empty"
    empty_input: str


DeliveryResultDocument = Annotated[
    CompletedResult | PendingResult | BlockedResult | StoppedResult | EmptyResult,
    Field(discriminator="status")]
"""``dpone.delivery_result.v1``: one of the five statuses."""
