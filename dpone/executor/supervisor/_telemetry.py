"""What a run tells its operators: metrics with bounded labels, one log event per transition and
per attempt, and a span per child step.

The metric labels are the run's profile id and bounded values of the catalogue
(:mod:`dpone.contracts.metrics`); operation ids, the plan digest and the child ordinal go to the
log events (logger ``dpone.delivery``) and span attributes only. Everything here is told after
the journal step it describes, so it never changes what the run does.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from opentelemetry.trace import Span

from dpone.contracts.journal import ChildOperation
from dpone.contracts.transport import Failure, Response
from dpone.observability import metrics, tracing
from dpone.observability.logs import event

LOG: Final = logging.getLogger("dpone.delivery")
ATTEMPT_STEP: Final = "enter_submitting"


@dataclass
class Telemetry:
    """The telemetry of one run (``profile``: the profile id, a bounded label)."""

    profile: str
    family: str
    environment: str
    plan_digest: str | None = None
    """The compiled plan's digest, known once the parent is admitted (:meth:`admitted`)."""

    def admitted(self, plan_digest: str) -> None:
        self.plan_digest = plan_digest

    def _fields(self, operation: ChildOperation) -> dict[str, str | int | None]:
        return {"operation_id": operation.operation_id, "parent_id": operation.parent_id,
                "plan_digest": self.plan_digest, "ordinal": operation.ordinal}

    # --- journal steps ------------------------------------------------------------------------

    def step(self, operation: ChildOperation, transition_id: str) -> None:
        """A journal transition (or writer step) of ``operation`` was committed."""
        metrics.transition(self.profile, transition_id)
        if not LOG.isEnabledFor(logging.INFO):  # nothing is built for an event nobody logs
            return
        axes = operation.axes
        fields = {**self._fields(operation), "transition": transition_id,
                  "state": operation.state_name, "revision": operation.revision,
                  "remote_effect": str(axes.remote_effect),
                  "acknowledgement_state": str(axes.acknowledgement_state),
                  "verification_state": str(axes.verification_state),
                  "checkpoint_state": str(axes.checkpoint_state),
                  "profile": self.profile, "environment": self.environment}
        if transition_id == ATTEMPT_STEP:
            event(LOG, "attempt", attempt=operation.attempt_ordinal, **fields)
        else:
            event(LOG, "transition", **fields)

    # --- requests -----------------------------------------------------------------------------

    def exchanged(self, phase: str, outcome: Response | Failure, seconds: float) -> None:
        """A request of ``phase`` was answered (or failed) after ``seconds`` (the run's clock)."""
        if isinstance(outcome, Response):
            metrics.request(self.profile, phase, "response", outcome.status, seconds)
        else:
            metrics.request(self.profile, phase, outcome.kind.value, outcome.status, seconds)

    def sent(self, operation: ChildOperation, wire_bytes: int) -> None:
        """A submit request of ``operation`` was handed to the transport."""
        metrics.sent(self.profile, operation.row_count, wire_bytes)

    def retrying(self, action: str, outcome: Response | Failure | int) -> None:
        status = (outcome if isinstance(outcome, int) else outcome.status)
        metrics.retry(self.profile, action, status)

    def waited(self, kind: str, seconds: float) -> None:
        """The run waited ``seconds`` for a ``kind`` turn of the account's rate limit."""
        metrics.rate_wait(self.profile, kind, seconds)

    def ended(self, result: str) -> None:
        metrics.delivery(self.profile, self.family, result)

    # --- spans --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def child(self, step: str, operation: ChildOperation) -> Iterator[Span]:
        """A span ``dpone.child.<step>`` (submit, observe, verify, promote) of ``operation``."""
        with tracing.span(f"dpone.child.{step}", **self._fields(operation)) as current:
            yield current
