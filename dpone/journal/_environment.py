"""The database clock and this journal's environment row (journal epoch, mutation gate)."""

from __future__ import annotations

import datetime as dt
import weakref
from typing import Any, Literal

from dpone.contracts._errors import DponeError
from dpone.journal._rows import EnvironmentRow
from dpone.journal._unit import UnitOfWork

EnvironmentLock = Literal["none", "share", "update"]


def database_now(tx: UnitOfWork) -> dt.datetime:
    """The database clock (never the worker clock), read through the ``clock_now`` query."""
    row = tx.one("clock_now")
    if row is None:
        raise DponeError(code="journal.unavailable", message="the database clock is missing")
    return tx.codec.moment(row["now"])


def environment(tx: UnitOfWork, *, lock: EnvironmentLock = "none") -> EnvironmentRow:
    """The journal epoch and mutation gate of this journal's environment (created OPEN at 0).

    ``share`` holds the row against a gate change until commit, so a gate change cannot
    interleave with a SUBMITTING transaction that has already read the gate as OPEN; ``update``
    holds it for the gate change itself.
    """
    if lock == "none" and tx in _READ:
        return _READ[tx]  # read once per transaction: only a gate change writes it, in its own
    row = _environment_row(tx, lock)
    if row is None:  # the first transaction of this environment creates its row
        tx.run("ensure_environment")
        row = _environment_row(tx, lock)
    if row is None:
        raise DponeError(code="journal.unavailable", message="the environment row is missing")
    _READ[tx] = decoded = EnvironmentRow.decode(row)
    return decoded


def remember(tx: UnitOfWork, current: EnvironmentRow) -> None:
    """``current`` is the environment row this transaction read by another query: later
    unlocked reads in the transaction return it."""
    _READ[tx] = current


_READ: weakref.WeakKeyDictionary[UnitOfWork, EnvironmentRow] = weakref.WeakKeyDictionary()
"""The environment row each open transaction read (dropped with the transaction)."""


def _environment_row(tx: UnitOfWork, lock: EnvironmentLock) -> dict[str, Any] | None:
    if lock == "share":
        return tx.one("share_environment")
    if lock == "update":
        return tx.one("lock_environment")
    return tx.one("get_environment")


def stored_environment(tx: UnitOfWork) -> EnvironmentRow | None:
    """The environment row if it was ever written (a read that creates nothing)."""
    row = tx.one("get_environment")
    return EnvironmentRow.decode(row) if row is not None else None
