"""Everything one receiver instance remembers: ledger, jobs, fault rules, id counters."""

from __future__ import annotations

import itertools

from dpone.receiver._config import ReceiverConfig
from dpone.receiver._faults import FaultBook
from dpone.receiver._jobs import JobBook
from dpone.receiver._ledger import Ledger


class ReceiverState:
    def __init__(self, config: ReceiverConfig) -> None:
        self.config = config
        self.ledger = Ledger(config.retained_rows)
        self.jobs = JobBook(self.ledger, config.processing_seconds, config.boot_id)
        self.faults = FaultBook()
        self._batch_ids = itertools.count(1)  # never reset, like job ids

    def now(self) -> float:
        return self.config.clock()

    def next_batch_id(self) -> str:
        return f"batch-{next(self._batch_ids):06d}"

    def reset(self) -> None:
        """Forget ledger, jobs and fault rules (ids keep counting)."""
        self.faults.clear()
        self.jobs.clear()
        self.ledger.clear()
