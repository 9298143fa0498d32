"""The unit of work every journal dialect offers the shared journal steps (no driver imports).

One ``UnitOfWork`` is one open transaction. The journal's transactions (``_tx``) and their
helpers run named queries through it with plain Python parameters (dates, aware datetimes,
mappings for JSON columns, lists); the dialect binds them for its driver and reads its own
clock. The rows it returns are decoded at once into the typed rows of ``_rows`` through
``codec``. Locking is the
dialect's: ``lock_domains`` takes the effect-domain locks where the dialect has them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from dpone.journal._rows import RowCodec


class UnitOfWork(Protocol):
    """One open journal transaction: named queries with named parameters, rows as dicts."""

    @property
    def codec(self) -> RowCodec:
        """How this dialect's stored values become Python values."""
        ...

    def one(self, name: str, /, **params: Any) -> dict[str, Any] | None: ...

    def all(self, name: str, /, **params: Any) -> list[dict[str, Any]]: ...

    def run(self, name: str, /, **params: Any) -> int: ...

    def run_many(self, name: str, rows: Sequence[Mapping[str, Any]], /) -> int:
        """A named batch query over parameter rows; the total affected row count.

        Each dialect runs its own form of the batch: PostgreSQL one statement reading every row
        from a ``jsonb`` array bound as ``rows``, SQLite one prepared statement stepped per row
        (``executemany``, in process). No rows run nothing.
        """
        ...

    def cas_audited(self, cas: Mapping[str, Any], audit: Mapping[str, Any]
                    ) -> dict[str, Any] | None:
        """``cas_child`` with ``cas`` and, when it updated the row, its ``insert_audit`` row
        with ``audit`` (the revision, namespace and tenant taken from the updated row): the
        updated row, or None. PostgreSQL runs both as one statement."""
        ...

    def now(self) -> dt.datetime:
        """The database clock (never the worker clock)."""
        ...

    def lock_domains(self, domains: Iterable[str]) -> bool:
        """Hold the effect-domain locks until commit, in canonical order.

        True when a lock was taken here (rows read before it may be stale and are read again);
        False when the transaction already serializes every writer.
        """
        ...
