"""Every guarded transition the supervisor requests, as typed lookups into the contract's ids.

A :class:`Step` names one transition by its generated symbol (``dpone.contracts._names``) with
the guard facts the supervisor proves when it takes it; the tables below map where a child
stands (its :class:`StateName`) and what happened (a response, poll or verification outcome) to
that step. No transition id is ever built from strings: a transition renamed or removed in the
contract breaks ``mypy --strict`` here, and ``REQUESTED`` (checked against the contract by a unit
test) lists every step with the lease it is taken under.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, NamedTuple

from dpone.contracts.journal import ChildOperation, LeaseKindName
from dpone.contracts.state import Fact as F
from dpone.contracts.state import StateName as S
from dpone.contracts.state import Transition as T


class Step(NamedTuple):
    """One guarded transition and the guard facts the supervisor proves for it."""

    transition: T
    facts: tuple[F, ...]


ResponseOutcome = Literal[
    "sync_success", "async_receipt_accepted", "duplicate_receipt_same_intent",
    "accepted_without_receipt", "bare_duplicate", "response_not_recognized",
    "rejected_before_effect"]
"""A classified submit answer that is recorded (a throttle answer is replayed or stopped)."""
PollOutcome = Literal["running", "succeeded", "failed", "cancelled", "receipt_expired",
                      "protocol_unknown"]
EmptyInputPolicy = Literal["skip", "promote"]
MutationKind = Literal["partition_replace", "incremental_append"]


def state_of(operation: ChildOperation) -> S:
    """Where ``operation`` stands, as the contract names it."""
    return S(operation.state_name)


# --- under the mutation lease ----------------------------------------------------------------

_EMPTY = (F.NO_REQUEST_SENT, F.SEALED_WITHOUT_ROWS, F.FROZEN_READ_COMPLETE)
_SKIPPED = Step(T.SEALED_EMPTY_INPUT_SKIPPED, (*_EMPTY, F.EMPTY_INPUT_SKIP_POLICY))
EMPTY_INPUT: Final[Mapping[tuple[EmptyInputPolicy, MutationKind], Step]] = {
    ("skip", "partition_replace"): _SKIPPED,
    ("skip", "incremental_append"): _SKIPPED,
    ("promote", "incremental_append"): Step(
        T.SEALED_EMPTY_INPUT_VERIFIED,
        (*_EMPTY, F.EMPTY_INPUT_PROMOTE_POLICY, F.INCREMENTAL_APPEND_MUTATION)),
}
"""A sealed child without rows, finalized without a request by the profile's policy and the
delivery's mutation kind (an empty replacement under ``promote`` is submitted instead)."""
FENCE_REFUSED: Final = Step(T.SEALED_PRE_SUBMIT_FENCE_REFUSED, (F.NO_REQUEST_SENT,))
NOT_STARTED_RETRY: Final = Step(T.SUBMITTING_NOT_STARTED_RETRY,
                                (F.REQUEST_NOT_STARTED_PROOF, F.RETRY_BUDGET_REMAINING))
NOT_STARTED_FINAL: Final = Step(T.SUBMITTING_NOT_STARTED_FINAL,
                                (F.REQUEST_NOT_STARTED_PROOF, F.RETRY_UNAVAILABLE))
MAY_HAVE_REACHED_UNFENCED: Final = Step(T.SUBMITTING_MAY_HAVE_REACHED_UNFENCED,
                                        (F.NO_CERTIFIED_FENCE,))
REPLAY_BUDGET_EXHAUSTED: Final = Step(T.REPLAY_FENCE_BUDGET_EXHAUSTED, (F.RETRY_UNAVAILABLE,))

_RECORDED = (F.RESPONSE_RECORDED,)
_RECEIPT = (F.RECEIPT_PERSISTED,)
_SAME_INTENT = (F.RECEIPT_PERSISTED, F.SAME_KEY_AND_INTENT_PROVEN)
RESPONSE: Final[Mapping[tuple[S, ResponseOutcome], Step]] = {
    (S.SUBMITTING, "sync_success"): Step(T.SUBMITTING_SYNC_SUCCESS, _RECORDED),
    (S.SUBMITTING, "async_receipt_accepted"): Step(T.SUBMITTING_ASYNC_RECEIPT_ACCEPTED, _RECEIPT),
    (S.SUBMITTING, "duplicate_receipt_same_intent"):
        Step(T.SUBMITTING_DUPLICATE_RECEIPT_SAME_INTENT, _SAME_INTENT),
    (S.SUBMITTING, "accepted_without_receipt"):
        Step(T.SUBMITTING_ACCEPTED_WITHOUT_RECEIPT, _RECORDED),
    (S.SUBMITTING, "bare_duplicate"): Step(T.SUBMITTING_BARE_DUPLICATE, _RECORDED),
    (S.SUBMITTING, "response_not_recognized"):
        Step(T.SUBMITTING_RESPONSE_NOT_RECOGNIZED, _RECORDED),
    (S.SUBMITTING, "rejected_before_effect"):
        Step(T.SUBMITTING_REJECTED_BEFORE_EFFECT,
             (F.RESPONSE_RECORDED, F.REJECTION_CERTIFIED_BEFORE_EFFECT)),
    # A same-key replay: a refusal before effect proves nothing of the earlier attempt, so it is
    # recorded as not recognized (the supervisor never asks for it here).
    (S.SUBMITTING_FENCED_REPLAY, "sync_success"): Step(T.REPLAY_SYNC_SUCCESS, _RECORDED),
    (S.SUBMITTING_FENCED_REPLAY, "async_receipt_accepted"):
        Step(T.REPLAY_ASYNC_RECEIPT_ACCEPTED, _RECEIPT),
    (S.SUBMITTING_FENCED_REPLAY, "duplicate_receipt_same_intent"):
        Step(T.REPLAY_DUPLICATE_RECEIPT_SAME_INTENT, _SAME_INTENT),
    (S.SUBMITTING_FENCED_REPLAY, "accepted_without_receipt"):
        Step(T.REPLAY_ACCEPTED_WITHOUT_RECEIPT, _RECORDED),
    (S.SUBMITTING_FENCED_REPLAY, "bare_duplicate"): Step(T.REPLAY_BARE_DUPLICATE, _RECORDED),
    (S.SUBMITTING_FENCED_REPLAY, "response_not_recognized"):
        Step(T.REPLAY_RESPONSE_NOT_RECOGNIZED, _RECORDED),
}
"""A recorded submit answer, by the in-flight state it answers."""
SYNC_SUCCESS_LANDS_IN: Final = S.VERIFYING_SUCCEEDED
"""Where a recorded synchronous success (first attempt or same-key replay) leaves the child."""
THROTTLED_BEYOND_BUDGET: Final[Mapping[S, Step]] = {
    S.SUBMITTING: Step(T.SUBMITTING_THROTTLED_BEYOND_BUDGET,
                       (F.RESPONSE_RECORDED, F.RETRY_UNAVAILABLE)),
    S.SUBMITTING_FENCED_REPLAY: Step(T.REPLAY_THROTTLED_BEYOND_BUDGET,
                                     (F.RESPONSE_RECORDED, F.RETRY_UNAVAILABLE)),
}
"""A Retry-After beyond the remaining submit budget, by the in-flight state."""

# --- under the observation lease -------------------------------------------------------------

_OBSERVED = (F.OBSERVATION_RECORDED,)
POLL: Final[Mapping[tuple[S, PollOutcome], Step]] = {
    (S.ACCEPTED, "running"): Step(T.ACCEPTED_POLL_RUNNING, _OBSERVED),
    (S.ACCEPTED, "succeeded"): Step(T.ACCEPTED_POLL_SUCCEEDED, _OBSERVED),
    (S.ACCEPTED, "failed"): Step(T.ACCEPTED_POLL_FAILED, _OBSERVED),
    (S.ACCEPTED, "cancelled"): Step(T.ACCEPTED_POLL_CANCELLED, _OBSERVED),
    (S.ACCEPTED, "receipt_expired"): Step(T.ACCEPTED_POLL_RECEIPT_EXPIRED, _OBSERVED),
    (S.ACCEPTED, "protocol_unknown"): Step(T.ACCEPTED_POLL_PROTOCOL_UNKNOWN, _OBSERVED),
    (S.WAITING, "running"): Step(T.WAITING_POLL_RUNNING, _OBSERVED),
    (S.WAITING, "succeeded"): Step(T.WAITING_POLL_SUCCEEDED, _OBSERVED),
    (S.WAITING, "failed"): Step(T.WAITING_POLL_FAILED, _OBSERVED),
    (S.WAITING, "cancelled"): Step(T.WAITING_POLL_CANCELLED, _OBSERVED),
    (S.WAITING, "receipt_expired"): Step(T.WAITING_POLL_RECEIPT_EXPIRED, _OBSERVED),
    (S.WAITING, "protocol_unknown"): Step(T.WAITING_POLL_PROTOCOL_UNKNOWN, _OBSERVED),
}
"""A recorded receipt poll, by the observing state it was taken from."""

_FULL = (F.VERIFICATION_RECORDED, F.ALL_ROWS_ACCOUNTED)
_PARTIAL = (F.VERIFICATION_RECORDED, F.RESULT_EVIDENCE_PUBLISHED)
_ABSENT = (F.VERIFICATION_RECORDED, F.ABSENCE_PROVEN)
_UNPROVEN = (F.VERIFICATION_RECORDED,)
VERIFIED_FULL: Final[Mapping[S, Step]] = {
    S.VERIFYING_SUCCEEDED: Step(T.VERIFYING_SUCCEEDED_VERIFIED_FULL, _FULL),
    S.VERIFYING_FAILED: Step(T.VERIFYING_FAILED_VERIFIED_FULL, _FULL),
    S.VERIFYING_CANCELLED: Step(T.VERIFYING_CANCELLED_VERIFIED_FULL, _FULL),
    S.VERIFYING_EXPIRED: Step(T.VERIFYING_EXPIRED_VERIFIED_FULL, _FULL),
}
VERIFIED_PARTIAL: Final[Mapping[S, Step]] = {
    S.VERIFYING_SUCCEEDED: Step(T.VERIFYING_SUCCEEDED_VERIFIED_PARTIAL, _PARTIAL),
    S.VERIFYING_FAILED: Step(T.VERIFYING_FAILED_VERIFIED_PARTIAL, _PARTIAL),
    S.VERIFYING_CANCELLED: Step(T.VERIFYING_CANCELLED_VERIFIED_PARTIAL, _PARTIAL),
    S.VERIFYING_EXPIRED: Step(T.VERIFYING_EXPIRED_VERIFIED_PARTIAL, _PARTIAL),
}
NO_EFFECT: Final[Mapping[S, Step]] = {
    # A success acknowledgement never proves the absence of an effect: no entry for it.
    S.VERIFYING_FAILED: Step(T.VERIFYING_FAILED_NO_EFFECT, _ABSENT),
    S.VERIFYING_CANCELLED: Step(T.VERIFYING_CANCELLED_NO_EFFECT, _ABSENT),
    S.VERIFYING_EXPIRED: Step(T.VERIFYING_EXPIRED_NO_EFFECT, _ABSENT),
}
NOT_PROVABLE: Final[Mapping[S, Step]] = {
    S.VERIFYING_SUCCEEDED: Step(T.VERIFYING_SUCCEEDED_NOT_PROVABLE, _UNPROVEN),
    S.VERIFYING_FAILED: Step(T.VERIFYING_FAILED_NOT_PROVABLE, _UNPROVEN),
    S.VERIFYING_CANCELLED: Step(T.VERIFYING_CANCELLED_NOT_PROVABLE, _UNPROVEN),
    S.VERIFYING_EXPIRED: Step(T.VERIFYING_EXPIRED_NOT_PROVABLE, _UNPROVEN),
}
MUTATION_LEASE_LOST: Final[Mapping[S, Step]] = {
    S.SUBMITTING: Step(T.SUBMITTING_MUTATION_LEASE_LOST, (F.SUBMIT_OUTCOME_ABSENT,)),
    S.SUBMITTING_FENCED_REPLAY: Step(T.REPLAY_MUTATION_LEASE_LOST, (F.SUBMIT_OUTCOME_ABSENT,)),
}
"""A child left in flight by a lost worker, taken over as UNKNOWN (never resent)."""


def _from(*tables: Mapping[Any, Step]) -> tuple[Step, ...]:
    return tuple(step for table in tables for step in table.values())


REQUESTED: Final[Mapping[LeaseKindName, tuple[Step, ...]]] = {
    "mutation": (
        *_from(EMPTY_INPUT, RESPONSE, THROTTLED_BEYOND_BUDGET), FENCE_REFUSED,
        NOT_STARTED_RETRY, NOT_STARTED_FINAL, MAY_HAVE_REACHED_UNFENCED,
        REPLAY_BUDGET_EXHAUSTED),
    "observation": _from(POLL, VERIFIED_FULL, VERIFIED_PARTIAL, NO_EFFECT, NOT_PROVABLE,
                         MUTATION_LEASE_LOST),
}
"""Every step the supervisor can take, by the lease it holds when it takes it. (SUBMITTING is
entered by the journal's critical transaction and promotion by ``promote_frontier``.)"""

SOURCE_STATES: Final[Mapping[T, S]] = {
    **{step.transition: state for (state, _), step in RESPONSE.items()},
    **{step.transition: state for (state, _), step in POLL.items()},
    **{step.transition: state
       for table in (THROTTLED_BEYOND_BUDGET, VERIFIED_FULL, VERIFIED_PARTIAL, NO_EFFECT,
                     NOT_PROVABLE, MUTATION_LEASE_LOST)
       for state, step in table.items()},
}
"""The state each keyed lookup assumes the child stands in: the transition's source."""
