"""How the profile's poll reads one answer about a job: the one classifier of a job status.

The supervisor's receipt observation and the operator's reconciliation (a receipt poll, or a
lookup by key whose answer is the job's status) read an answer the same way: an expired status,
the certified key echo, the phase word, and the counters when they come from the poll response.
"""

from __future__ import annotations

from dpone.contracts import DponeError, StrictModel
from dpone.contracts.journal import ChildOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.profile import Extractor, KeyEcho, Poll, ResponseBounds
from dpone.contracts.sealed import SealedChild
from dpone.contracts.transport import Response
from dpone.executor.supervisor._transitions import PollOutcome
from dpone.executor.transport import ExtractionError, extract


def phase_of(poll: Poll, word: str) -> PollOutcome:
    """The poll outcome a phase word of the profile means."""
    if word in poll.running:
        return "running"
    if word in poll.succeeded or word in poll.partial:
        return "succeeded"  # a finished job; verification decides full or partial effect
    if word in poll.failed:
        return "failed"
    if word in poll.cancelled:
        return "cancelled"
    return "protocol_unknown"


def expected_echo(echo: KeyEcho, operation: ChildOperation, sealed: SealedChild) -> str | None:
    """The key as the sealed request carried it: its multipart filename, or the key itself."""
    if echo.form == "payload_filename":
        return sealed.request.filename
    return operation.receiver_mutation_key


def echo_matches(echo: KeyEcho, expected: str | None, response: Response,
                 bounds: ResponseBounds) -> bool:
    """True when ``response`` echoes ``expected``; missing, unreadable or other is False."""
    try:
        values = extract({"key_echo": echo.extractor()}, response, bounds)
    except ExtractionError:
        return False
    return expected is not None and values.get("key_echo") == expected


class JobStatus(StrictModel):
    """How the profile's poll reads one answer about a job: the outcome and its bounded scalars
    (``http_status``, ``phase``, counters, ``key_echo``: ``matched`` or ``mismatch`` where the
    poll certifies an echo; a mismatch is an answer about another key's job)."""

    outcome: PollOutcome
    values: dict[str, str | int]

    @property
    def about_another_key(self) -> bool:
        return self.values.get("key_echo") == "mismatch"


def classify_status(plan: RestDeliveryPlan, operation: ChildOperation, sealed: SealedChild,
                    response: Response) -> JobStatus:
    """Read ``response`` as the profile's poll reads a job status answer for ``operation``.

    An expired status is ``receipt_expired``; an answer that does not echo the child's key (where
    the poll certifies an echo) is ``protocol_unknown`` with ``key_echo: mismatch``; otherwise
    the phase word gives the outcome and, with counters from the poll response, the counters
    are read (optional here: a missing counter is left out, never guessed). An unreadable phase
    is ``protocol_unknown``.
    """
    profile = plan.profile.snapshot
    poll = profile.acknowledgement.poll
    if poll is None:
        raise DponeError(code="input.invalid_argument", operation_id=operation.operation_id,
                         message=f"profile {profile.ref} has no poll to read a job status with")
    bounds = profile.observability.response_bounds
    values: dict[str, str | int] = {"http_status": response.status}
    if response.status in poll.expired_statuses:
        return JobStatus(outcome="receipt_expired", values=values)
    if poll.key_echo is not None:
        matched = echo_matches(poll.key_echo, expected_echo(poll.key_echo, operation, sealed),
                               response, bounds)
        values["key_echo"] = "matched" if matched else "mismatch"
        if not matched:
            return JobStatus(outcome="protocol_unknown", values=values)
    extractors: dict[str, Extractor] = {"phase": poll.state}
    if profile.verification.counters_from == "poll_response":
        extractors["accepted_rows"] = profile.verification.accepted_rows.model_copy(
            update={"required": False})
        if profile.verification.rejected_rows is not None:
            extractors["rejected_rows"] = profile.verification.rejected_rows.model_copy(
                update={"required": False})
    try:
        values.update(extract(extractors, response, bounds))
        return JobStatus(outcome=phase_of(poll, str(values["phase"])), values=values)
    except ExtractionError:
        return JobStatus(outcome="protocol_unknown", values=values)
