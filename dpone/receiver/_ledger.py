"""The in-memory ledger: every mutation the receiver applied, request counts, and the
``Idempotency-Key`` header of every request that carried one (in arrival order, bounded).

A mutation is one application of rows under ``(kind, resource, key)``: the ``X-Delivery-Key``
of a synchronous batch or the filename of an asynchronous job. Applying the same triple again
is counted as a duplicate mutation: the evidence that a delivery was not exactly-once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

MutationKind = Literal["sync", "async"]
_LISTED_MUTATIONS = 1000
_LISTED_KEYS = 1000
_COUNTED_REQUEST_LINES = 1000
_LISTED_IDEMPOTENCY_KEYS = 1000
_OTHER_REQUESTS = "(other)"


def iso_utc(epoch_seconds: float) -> str:
    """``2026-09-21T10:00:00.000Z``: millisecond UTC, the ledger's only time format."""
    stamp = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class Mutation:
    kind: MutationKind
    key: str
    resource: str
    rows: int
    applied_at: float
    records: tuple[dict[str, Any], ...]
    records_complete: bool
    duplicate: bool

    def to_json(self, *, with_rows: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": self.kind, "key": self.key, "resource": self.resource,
                                "rows": self.rows, "applied_at": iso_utc(self.applied_at),
                                "duplicate": self.duplicate}
        if with_rows:
            body["records"] = list(self.records)
            body["records_complete"] = self.records_complete
        return body


class Ledger:
    """Thread-safe: the server's event loop writes, tests may read a snapshot from any thread."""

    def __init__(self, retained_rows: int) -> None:
        self._retained_rows = retained_rows
        self._lock = threading.Lock()
        self._mutations: list[Mutation] = []
        self._rows_by_key: dict[str, int] = {}
        self._applied: set[tuple[str, str, str]] = set()
        self._duplicates = 0
        self._retained = 0
        self._requests: dict[str, int] = {}
        self._idempotency_keys: list[dict[str, str]] = []

    def apply(self, *, kind: MutationKind, resource: str, key: str,
              rows: list[dict[str, Any]], applied_at: float) -> Mutation:
        """Record one mutation of ``rows`` (already the rows that took effect)."""
        with self._lock:
            identity = (kind, resource, key)
            duplicate = identity in self._applied
            self._applied.add(identity)
            self._duplicates += duplicate
            room = max(0, self._retained_rows - self._retained)
            kept = tuple(rows[:room])
            self._retained += len(kept)
            mutation = Mutation(kind=kind, key=key, resource=resource, rows=len(rows),
                                applied_at=applied_at, records=kept,
                                records_complete=len(kept) == len(rows), duplicate=duplicate)
            self._mutations.append(mutation)
            self._rows_by_key[key] = self._rows_by_key.get(key, 0) + len(rows)
            return mutation

    def count_request(self, method: str, path: str, idempotency_key: str | None = None) -> None:
        line = f"{method} {path}"
        with self._lock:
            if idempotency_key is not None and \
                    len(self._idempotency_keys) < _LISTED_IDEMPOTENCY_KEYS:
                self._idempotency_keys.append({"request": line, "key": idempotency_key})
            if line not in self._requests and len(self._requests) >= _COUNTED_REQUEST_LINES:
                line = _OTHER_REQUESTS
            self._requests[line] = self._requests.get(line, 0) + 1

    def clear(self) -> None:
        with self._lock:
            self._mutations.clear()
            self._rows_by_key.clear()
            self._applied.clear()
            self._requests.clear()
            self._idempotency_keys.clear()
            self._duplicates = 0
            self._retained = 0

    @property
    def mutations(self) -> tuple[Mutation, ...]:
        with self._lock:
            return tuple(self._mutations)

    @property
    def duplicate_mutations(self) -> int:
        with self._lock:
            return self._duplicates

    def snapshot(self, *, with_rows: bool = False) -> dict[str, Any]:
        """The bounded JSON view served at ``GET /mock/_ledger``."""
        with self._lock:
            listed = self._mutations[-_LISTED_MUTATIONS:]
            keys = list(self._rows_by_key.items())
            return {
                "mutations": [m.to_json(with_rows=with_rows) for m in listed],
                "mutations_total": len(self._mutations),
                "rows_by_key": dict(keys[:_LISTED_KEYS]),
                "rows_by_key_complete": len(keys) <= _LISTED_KEYS,
                "rows_total": sum(m.rows for m in self._mutations),
                "duplicate_mutations": self._duplicates,
                "requests": dict(self._requests),
                "idempotency_keys": [dict(entry) for entry in self._idempotency_keys],
            }
