"""``dpone.remote_effect_fault_matrix.v1``: the process-cut fault matrix's evidence.

One cell is one ``dpone deliver`` killed with SIGKILL at one cut point (``DPONE_TEST_CUT``),
possibly under a receiver fault, then recovered from another process in a fresh working
directory with the commands ``inspect`` names. The document keeps, per cell, what the receiver
applied per delivery key, the rows applied against the rows sealed, the final outcome axes of
every child, every command run with its exit code, and how long the lost run's leases held the
recovery off. Written by the fault-matrix test to ``test_artifacts/``.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from dpone.contracts._axes import StateTuple
from dpone.contracts.documents._report import Report

FAULT_MATRIX_SCHEMA_ID: Final = "dpone.remote_effect_fault_matrix.v1"

Dialect = Literal["sqlite", "postgres"]
Family = Literal["sync_batch", "async_bulk_job"]
ReceiverFault = Literal["none", "commit_then_reset", "throttle_429", "server_error_5xx",
                        "receipt_expired"]
CommandRole = Literal["cut", "discovery", "restart", "lease_wait", "operator"]
"""Why a command ran: the killed ``deliver`` (``cut``), finding the delivery (``discovery``),
the restart of the lost run (``restart``), a restart refused while the lost run's lease held
(``lease_wait``), or an operator's ``inspect``/``reconcile``/``resume`` (``operator``)."""


class MatrixCommand(Report):
    """One command of a cell: its words (locators shortened), role, exit code and outcome."""

    role: CommandRole
    command: str
    """``deliver``, ``delivery list``, ``delivery inspect``, ``delivery reconcile`` or
    ``delivery resume``."""
    argv: tuple[str, ...]
    exit_code: int
    status: str | None
    """The document's ``status`` (``completed``, ``blocked``...) or its error code."""
    allowed_actions: tuple[str, ...]


class MatrixChild(Report):
    """One child at the end of the cell."""

    ordinal: int
    delivery_key: str
    rows_sealed: int
    rows_applied: int
    """Rows the receiver's ledger applied under this child's key."""
    mutations: int
    """Mutations the receiver's ledger applied under this child's key (1 is exactly once)."""
    attempts: int
    unproved_resends: int
    """Attempts after the first whose predecessor neither proved the request never took effect
    nor entered a certified same-key replay."""
    state_name: str
    axes: StateTuple


class MatrixCell(Report):
    cell_id: str
    dialect: Dialect
    family: Family
    workload: str
    cut: str
    """``<before|after>:<point>@<occurrence>``."""
    receiver_fault: ReceiverFault
    children_total: int
    killed: bool
    """The cut ``deliver`` died by SIGKILL at the named point."""
    admitted: bool
    """The lost run had admitted the delivery before it died."""
    recovery_wait_s: float
    """Seconds from the kill until a restart was no longer refused for a held lease."""
    lease_refusals: int
    operator_commands: int
    commands: tuple[MatrixCommand, ...]
    children: tuple[MatrixChild, ...]
    rows_sealed: int
    rows_applied: int
    duplicate_mutations: int
    false_successes: int
    """Commands that exited 0 or reported ``completed`` while sealed rows were not applied."""
    unproved_resends: int
    completed: bool
    final_exit_code: int


class MatrixTotals(Report):
    cells: int
    cells_by_dialect: dict[str, int]
    cells_by_family: dict[str, int]
    cells_by_receiver_fault: dict[str, int]
    killed: int
    completed: int
    duplicate_mutations: int
    false_successes: int
    unproved_resends: int
    max_operator_commands: int
    max_recovery_wait_s: float
    wall_time_s: float


class RemoteEffectFaultMatrix(Report):
    """The whole matrix: its totals, then every cell."""

    schema_id: Literal["dpone.remote_effect_fault_matrix.v1"] = Field(
        default=FAULT_MATRIX_SCHEMA_ID, alias="schema")
    producer: str
    """``dpone <version>``."""
    lease_ttl_s: int | None
    """The lease length the matrix's environment gives every run (None: the product default)."""
    totals: MatrixTotals
    cells: tuple[MatrixCell, ...]
