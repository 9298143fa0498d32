"""Receiver configuration and the injectable clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from dpone.receiver._jobs import BOOT_ID

Clock = Callable[[], float]
"""Returns the current time in seconds since the Unix epoch."""

MIB = 1024 * 1024


@dataclass(frozen=True)
class ReceiverConfig:
    """How one mock receiver behaves.

    ``token``: when set, every request needs ``Authorization: Bearer <token>`` (401 otherwise);
    the token is never logged, echoed or stored in the ledger, and is left out of ``repr``.
    ``processing_seconds``: an async job is ``pending`` for the first half of it, ``running``
    for the second half, then terminal. ``clock`` drives jobs and ``applied_at`` stamps.
    ``max_body_bytes`` / ``max_decoded_bytes`` bound one request body and one gunzipped file.
    ``retained_rows`` bounds how many parsed rows the ledger keeps for ``?rows=1`` (all rows are
    always counted). ``boot_id`` (8 lowercase hex digits) is the start-specific part of every
    job id (``job-<boot id>-000001``); unset, each receiver start draws a random one, so job ids
    never repeat across restarts. Pin it only to model a receiver whose job ids do repeat.

    Variants that contradict what the async profile claims (certification tests; the defaults
    are the certified behaviour): ``forget_keys_after_seconds`` makes the duplicate check forget
    a job's filename (its key) that many seconds after the job was created, so the same file
    submitted later is a new job (the job, its receipt and its lookup by key stay);
    ``rebind_keys`` makes a filename submitted again with *other* bytes a new job (only the same
    bytes are a duplicate); ``receipt_ttl_seconds`` makes a job's receipt answer ``410`` once the
    job is that old (the lookup by key still finds it).
    """

    token: str | None = field(default=None, repr=False)
    processing_seconds: float = 1.0
    clock: Clock = time.time
    max_body_bytes: int = 64 * MIB
    max_decoded_bytes: int = 256 * MIB
    retained_rows: int = 200_000
    boot_id: str | None = None
    forget_keys_after_seconds: float | None = None
    rebind_keys: bool = False
    receipt_ttl_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.token is not None and not self.token:
            raise ValueError("the receiver token must be non-empty when set")
        if self.processing_seconds < 0:
            raise ValueError("processing_seconds must be non-negative")
        if self.max_body_bytes <= 0 or self.max_decoded_bytes <= 0 or self.retained_rows < 0:
            raise ValueError("receiver limits must be positive")
        if self.boot_id is not None and not BOOT_ID.fullmatch(self.boot_id):
            raise ValueError("boot_id must be 8 lowercase hex digits")
        for name in ("forget_keys_after_seconds", "receipt_ttl_seconds"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be positive when set")


class ManualClock:
    """A clock that moves only when told to; safe to advance from a test thread."""

    def __init__(self, start: float = 1_790_000_000.0) -> None:
        self._now = float(start)

    def __call__(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock never moves backwards")
        self._now += seconds
