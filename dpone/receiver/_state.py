"""Everything one receiver instance remembers: ledger, jobs, fault rules, id counters."""

from __future__ import annotations

import itertools
import threading

from dpone.receiver._config import ReceiverConfig
from dpone.receiver._exchanges import ExchangeLog
from dpone.receiver._faults import FaultBook
from dpone.receiver._jobs import JobBook
from dpone.receiver._ledger import Ledger


class ReceiverState:
    def __init__(self, config: ReceiverConfig) -> None:
        self.config = config
        self.ledger = Ledger(config.retained_rows)
        self.jobs = JobBook(self.ledger, config.processing_seconds, config.boot_id,
                            forget_keys_after=config.forget_keys_after_seconds,
                            rebind_keys=config.rebind_keys)
        self.faults = FaultBook()
        self.exchanges = ExchangeLog()
        self._batch_ids = itertools.count(1)  # never reset, like job ids
        self._handling = 0
        self._handling_lock = threading.Lock()

    @property
    def handling(self) -> int:
        """Requests being handled now (a test waits for 0 before it reads the ledger as the
        receiver's final word, e.g. after its client was killed mid-request)."""
        with self._handling_lock:
            return self._handling

    def handled(self, step: int) -> None:
        """One request starts (``+1``) or ends (``-1``)."""
        with self._handling_lock:
            self._handling += step

    def now(self) -> float:
        return self.config.clock()

    def next_batch_id(self) -> str:
        return f"batch-{next(self._batch_ids):06d}"

    def reset(self) -> None:
        """Forget ledger, jobs, fault rules and received requests (ids keep counting)."""
        self.faults.clear()
        self.exchanges.clear()
        self.jobs.clear()
        self.ledger.clear()
