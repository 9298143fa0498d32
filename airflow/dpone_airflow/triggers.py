"""``DeliveryReceiptTrigger``: observe a pending delivery's durable receipt, read-only.

Pure data (``serialize()``: this classpath, the child's operation id, the non-secret journal
locator and the W3C ``traceparent`` of the span that deferred, ``None`` when there was none; a
trigger serialized before it travelled still loads). In the triggerer's shared event loop it
never blocks: each observation step (journal read, observation lease, one due GET of the
certified receipt URL, the CAS that records it) runs in a worker thread bounded by
``step_timeout_s``, and the dpone runtime is imported there, lazily. It polls until the child
leaves observation (or a step fails); an unchanged running job is journaled only every tenth
poll (the polls between are counted and recorded with the next), so a long job does not write a
revision per poll. Then it emits one ``TriggerEvent({"operation_id",
"observed_revision", ..., "traceparent"})`` (the resumed task continues that trace). The event
is a hint: the operator's ``execute_complete`` rereads the journal. Duplicate triggers and
repeated events are harmless: the observation lease and the revision CAS let one poll record,
and a trigger that finds the child already moved on emits without a request. Each step runs in a
span ``dpone.airflow.trigger_observe``, a child of ``traceparent``
(:mod:`dpone_airflow._tracing`).
"""

# mypy: disable-error-code="no-untyped-call"
# (Airflow's BaseTrigger and TriggerEvent constructors are untyped.)
from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from dpone_airflow import _tracing
from dpone_airflow._locator import JournalLocator
from dpone_airflow._outcome import parent_of


class DeliveryReceiptTrigger(BaseTrigger):  # type: ignore[misc,unused-ignore]
    """Wait, read-only, until the child ``operation_id`` leaves receipt observation."""

    def __init__(self, operation_id: str, journal_locator: dict[str, str | int | None],
                 step_timeout_s: float = 120.0, max_sleep_s: float = 30.0,
                 traceparent: str | None = None) -> None:
        super().__init__()
        self.operation_id = operation_id
        self.journal_locator = dict(journal_locator)
        self.step_timeout_s = float(step_timeout_s)
        self.max_sleep_s = float(max_sleep_s)
        self.traceparent = traceparent if traceparent is not None \
            and _tracing.TRACEPARENT.fullmatch(traceparent) else None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"operation_id": self.operation_id, "journal_locator": self.journal_locator,
                 "step_timeout_s": self.step_timeout_s, "max_sleep_s": self.max_sleep_s,
                 "traceparent": self.traceparent})

    def _sleep_s(self, due: dt.datetime | None) -> float:
        if due is None:
            return self.max_sleep_s
        wait = (due - dt.datetime.now(dt.UTC)).total_seconds()
        return min(max(wait, 0.05), self.max_sleep_s)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        from dpone_airflow._runtime import observe_once  # noqa: PLC0415 - lazy, off the loop

        locator = JournalLocator.from_kwargs(self.journal_locator)
        parent_id = parent_of(self.operation_id)
        quiet: Any = None  # the unrecorded polls, from one step to the next (runtime-typed)
        while True:
            try:
                with _tracing.span("dpone.airflow.trigger_observe", traceparent=self.traceparent,
                                   operation_id=self.operation_id, parent_id=parent_id) as span:
                    # asyncio.timeout, not wait_for: on Python 3.11 wait_for returns the step's
                    # result and drops a cancellation that arrives as the step finishes, so a
                    # stopped triggerer would go on polling.
                    async with asyncio.timeout(self.step_timeout_s):
                        observed = await asyncio.to_thread(observe_once, locator,
                                                           self.operation_id, quiet)
                    quiet = observed.quiet
                    span.set_attributes(_tracing.attributes(state_name=observed.state_name,
                                                            revision=observed.revision))
            except TimeoutError:
                yield TriggerEvent({"operation_id": self.operation_id,
                                    "observed_revision": None, "error": "step_timeout",
                                    "traceparent": self.traceparent})
                return
            except Exception as error:  # the journal stays the authority: the task rereads it
                code = getattr(error, "code", type(error).__name__)
                yield TriggerEvent({"operation_id": self.operation_id,
                                    "observed_revision": None, "error": str(code),
                                    "traceparent": self.traceparent})
                return
            if not observed.observing:
                yield TriggerEvent({"operation_id": self.operation_id,
                                    "observed_revision": observed.revision,
                                    "state_name": observed.state_name,
                                    "traceparent": self.traceparent})
                return
            self.log.info("delivery child %s %s (revision %d): next check %s",
                          self.operation_id, observed.state_name, observed.revision,
                          observed.next_check_after)
            await asyncio.sleep(self._sleep_s(observed.next_check_after))
