"""Asynchronous dataset jobs: time-driven phases and exactly-once application at the end.

A job is ``pending`` for the first half of ``processing_seconds``, ``running`` for the second
half, and reaches its ending at ``created_at + processing_seconds``: ``complete`` (every row
applied), or the ending a fault gave it: ``incomplete`` (some rows applied, the rest
rejected), ``cancelled`` or ``error`` (``apply_rows`` rows applied). A job can also be ended
externally before that time. Rows are applied to the ledger once, when the job ends, stamped
with the job's end time; ``settle`` is called on every request, so no poll is needed for a
due job to take effect.

Job ids are ``job-<boot id>-<number>``: the boot id is 8 hex digits drawn when the book is made
(one per receiver start), the number counts from 000001 and is never reset, so a receipt issued
before a restart never names a job of the restarted receiver. A status answer echoes the job's
``filename`` (the submitted duplicate key), so a client can check that a receipt names its job.

A submit repeats a job when its filename was submitted before (:meth:`JobBook.duplicate_of`).
Two variants contradict that on purpose (certification tests): ``forget_keys_after`` forgets a
filename that many seconds after its job was created (the same file is then a new job), and
``rebind_keys`` takes the same filename with other bytes as a new job.

A job can also be looked up read-only by its key (:meth:`JobBook.by_key`): ``sha256:<hex>``
(or the bare hex) names the job whose filename is ``<hex>.<extension>``, the first one submitted
if several extensions share the hex. The book and the ledger live and die together (a restart
or a reset forgets both), so "no job under this key" always means "nothing applied under it
that this receiver still holds".
"""

from __future__ import annotations

import itertools
import re
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from dpone.receiver._ledger import Ledger

Phase = Literal["pending", "running", "complete", "incomplete", "error", "cancelled"]
Ending = Literal["complete", "incomplete", "error", "cancelled"]
JOB_RESOURCE = "dataset-jobs"
BOOT_ID = re.compile(r"[0-9a-f]{8}")
_KEY = re.compile(r"(?:sha256:)?([0-9a-f]{64})")


@dataclass
class Job:
    job_id: str
    filename: str
    created_at: float
    rows: list[dict[str, Any]]
    ending: Ending = "complete"
    apply_rows: int | None = None
    ended: Phase | None = None
    rows_accepted: int = 0
    rows_rejected: int = 0
    expired_status: int | None = None
    scope: dict[str, str] = field(default_factory=dict)
    payload_digest: str = ""
    """The SHA-256 (hex) of the submitted file part: what ``rebind_keys`` compares."""

    def phase(self, now: float, processing_seconds: float) -> Phase:
        if self.ended is not None:
            return self.ended
        return "pending" if now - self.created_at < processing_seconds / 2 else "running"

    def to_json(self, now: float, processing_seconds: float) -> dict[str, Any]:
        return {"job_id": self.job_id, "filename": self.filename,
                "phase": self.phase(now, processing_seconds),
                "rows_accepted": self.rows_accepted, "rows_rejected": self.rows_rejected}


class JobBook:
    """The jobs of one receiver start; ``boot_id`` (8 hex digits) is random unless given."""

    def __init__(self, ledger: Ledger, processing_seconds: float,
                 boot_id: str | None = None, *, forget_keys_after: float | None = None,
                 rebind_keys: bool = False) -> None:
        if boot_id is not None and not BOOT_ID.fullmatch(boot_id):
            raise ValueError("a boot id is 8 lowercase hex digits")
        self.boot_id = boot_id or secrets.token_hex(4)
        self._ledger = ledger
        self._processing = processing_seconds
        self._forget_after = forget_keys_after
        self._rebind = rebind_keys
        self._lock = threading.RLock()
        self._jobs: dict[str, Job] = {}
        self._by_filename: dict[str, list[str]] = {}
        self._by_key: dict[str, str] = {}
        self._active: dict[str, Job] = {}
        self._ids = itertools.count(1)  # never reset: a stale receipt never names a new job

    @property
    def processing_seconds(self) -> float:
        return self._processing

    def by_filename(self, filename: str) -> Job | None:
        """The newest job submitted under ``filename``."""
        with self._lock:
            job_ids = self._by_filename.get(filename)
            return self._jobs[job_ids[-1]] if job_ids else None

    def duplicate_of(self, filename: str, payload_digest: str, now: float) -> Job | None:
        """The job a submit of ``filename`` with these bytes repeats, or None for a new job:
        the newest job of that filename, unless the book forgot it (``forget_keys_after``) or,
        with ``rebind_keys``, its bytes were other ones."""
        with self._lock:
            for job_id in reversed(self._by_filename.get(filename, [])):
                job = self._jobs[job_id]
                if self._forget_after is not None and now - job.created_at >= self._forget_after:
                    continue
                if self._rebind and job.payload_digest != payload_digest:
                    continue
                return job
            return None

    def by_key(self, key: str) -> Job | None:
        """The job submitted under ``key`` (``sha256:<hex>`` or ``<hex>``); None for another
        form or when none was."""
        match = _KEY.fullmatch(key)
        with self._lock:
            job_id = self._by_key.get(match.group(1)) if match else None
            return self._jobs[job_id] if job_id is not None else None

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def create(self, *, filename: str, rows: list[dict[str, Any]], now: float,
               scope: dict[str, str], payload_digest: str = "") -> Job:
        """A new job; the caller has checked that it repeats none (:meth:`duplicate_of`)."""
        with self._lock:
            job = Job(job_id=f"job-{self.boot_id}-{next(self._ids):06d}", filename=filename,
                      created_at=now, rows=rows, scope=scope, payload_digest=payload_digest)
            self._jobs[job.job_id] = job
            self._active[job.job_id] = job
            self._by_filename.setdefault(filename, []).append(job.job_id)
            self._by_key.setdefault(filename.split(".", 1)[0], job.job_id)
            return job

    def settle(self, now: float) -> None:
        """End every job whose processing time has passed."""
        with self._lock:
            due = [job for job in self._active.values() if job.created_at + self._processing <= now]
            for job in sorted(due, key=lambda job: job.created_at):
                self._end(job, job.ending, job.apply_rows, at=job.created_at + self._processing)

    def end_now(self, job: Job, ending: Ending, apply_rows: int, now: float) -> None:
        """End a job externally (cancellation or failure observed now), if it is still active."""
        with self._lock:
            if job.ended is None:
                self._end(job, ending, apply_rows, at=now)

    def _end(self, job: Job, ending: Ending, apply_rows: int | None, *, at: float) -> None:
        total = len(job.rows)
        applied = total if apply_rows is None else min(apply_rows, total)
        self._ledger.apply(kind="async", resource=JOB_RESOURCE, key=job.filename,
                           rows=job.rows[:applied], applied_at=at)
        job.rows_accepted = applied
        job.rows_rejected = total - applied if ending == "incomplete" else 0
        job.ended = ending
        job.rows = []
        self._active.pop(job.job_id, None)

    def clear(self) -> None:
        with self._lock:
            self._jobs.clear()
            self._active.clear()
            self._by_filename.clear()
            self._by_key.clear()
