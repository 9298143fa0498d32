"""Where a child stands and what may happen next: the state groups the supervisor acts on and
the operator actions each blocking code allows. Never an automatic resend."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal

from dpone.contracts.journal import ChildOperation, ChildStanding
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.state import StateName as S

DeliveryStatus = Literal["completed", "pending", "blocked", "in_progress"]
DELIVERY_STATUSES: Final[tuple[DeliveryStatus, ...]] = ("completed", "pending", "blocked",
                                                        "in_progress")

SUBMITTABLE_STATES: Final = frozenset({S.SEALED, S.RETRY_WAIT})
"""Nothing may have reached the receiver: the next attempt is a submit."""
IN_FLIGHT_STATES: Final = frozenset({S.SUBMITTING, S.SUBMITTING_FENCED_REPLAY})
"""A request may be on the wire: only its own mutation lease records the outcome."""
OBSERVING_STATES: Final = frozenset({S.ACCEPTED, S.WAITING})
"""A durable receipt: the only continuation is the read-only ``poll_receipt``."""
VERIFYING_STATES: Final = frozenset({S.VERIFYING_SUCCEEDED, S.VERIFYING_FAILED,
                                     S.VERIFYING_CANCELLED, S.VERIFYING_EXPIRED})
NO_EFFECT_STATES: Final = frozenset({
    S.FINAL_NOT_ACCEPTED_NONE, S.FINAL_ACCEPTED_NONE, S.FINAL_FAILED_NONE,
    S.FINAL_CANCELLED_NONE, S.FINAL_EXPIRED_NONE, S.FINAL_PROTOCOL_UNKNOWN_NONE})
"""Finalized with no effect after a request: resubmitted (same delivery key, new attempt) only
when an operator reconciliation proved it (:func:`reconciled_absent`)."""

AWAITS_FIX_CODES: Final = frozenset({"credential.rejected", "credential.unavailable"})
"""A child left in RETRY_WAIT with one of these codes waits for an operator's fix (the
credential), not for time: resuming submits it again only once the cause is fixed."""

OperatorAction = Literal[
    "inspect_evidence", "reconcile_delivery_key", "run_certified_compensation",
    "query_by_delivery_key", "deliver_new_generation", "fix_credential", "resume_delivery",
    "inspect_newer_generation", "use_certified_correction_contract", "promote_checkpoint",
    "poll_receipt", "verify_counters", "wait_for_mutation_lease"]
"""Every next action the supervisor names (the runbook describes each stop's)."""

ACTIONS: Final[Mapping[str, tuple[OperatorAction, ...]]] = {
    "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN": ("inspect_evidence", "reconcile_delivery_key"),
    "REST_DELIVERY_UNSAFE_RETRY": ("inspect_evidence", "reconcile_delivery_key"),
    "REST_DELIVERY_PARTIALLY_APPLIED": ("inspect_evidence", "reconcile_delivery_key",
                                        "run_certified_compensation"),
    "REST_DELIVERY_COUNT_MISMATCH": ("inspect_evidence", "reconcile_delivery_key"),
    "REST_DELIVERY_PROTOCOL_UNKNOWN": ("inspect_evidence", "reconcile_delivery_key"),
    "REST_DELIVERY_RECEIPT_EXPIRED": ("inspect_evidence", "query_by_delivery_key",
                                      "reconcile_delivery_key"),
    "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET": ("inspect_evidence", "reconcile_delivery_key"),
    "receiver.terminal_failure": ("inspect_evidence", "deliver_new_generation"),
    "observation.limit_reached": ("inspect_evidence", "query_by_delivery_key",
                                  "reconcile_delivery_key"),
    "credential.rejected": ("fix_credential", "resume_delivery"),
    "REST_DELIVERY_STALE_GENERATION": ("inspect_newer_generation",),
    "REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED": ("inspect_evidence",
                                                   "use_certified_correction_contract"),
}
"""What an operator may do after each blocking code: the one table the stop results, ``inspect``
and the runbook (docs/runbooks/delivery-outcomes.md, checked by tests) take it from."""


def fence_certified(plan: RestDeliveryPlan) -> bool:
    """The plan's receiver fence is certified here: same-key replay is allowed."""
    return plan.fence.type != "none" and plan.fence.certified_in_environment


def takeover_certified(plan: RestDeliveryPlan) -> bool:
    """A lost run's submit may be replayed with the same key: the fence is certified here and a
    certification PASSes key binding and key retention (how long it is kept is measured). The
    journal still checks that retention against the first attempt's age."""
    return fence_certified(plan) and plan.fence.certified_retention_s is not None


def submits_empty(plan: RestDeliveryPlan) -> bool:
    """An empty child of ``plan`` is submitted like any other: under ``empty_input: promote`` a
    ``partition_replace`` replaces its window with nothing, which deletes the receiver's rows
    there (a real effect only the receiver's counters, 0 of 0, verify). Appending nothing is
    vacuous, and ``skip`` sends nothing."""
    return (plan.profile.snapshot.result_policy.empty_input == "promote"
            and plan.source_boundary.mutation_kind == "partition_replace")


def finished(child: ChildOperation | ChildStanding) -> bool:
    """Nothing is left to do for ``child``: promoted, or skipped as empty input (it holds nothing
    to promote and the frontier passes over it)."""
    return child.axes.checkpoint_state == "PROMOTED" or child.empty_input == "skipped"


def reconciled_absent(child: ChildOperation | ChildStanding) -> bool:
    """``child`` stands finalized with no effect and no error code: an operator reconciliation
    proved that nothing was applied (automatic verification records ``receiver.terminal_failure``),
    so resuming submits the same delivery key again. The journal proves it once more from its
    audit before it lets the attempt enter SUBMITTING."""
    return child.state_name in NO_EFFECT_STATES and child.last_error_code is None


def allowed_actions(child: ChildOperation | ChildStanding) -> tuple[OperatorAction, ...]:
    """The machine-readable next actions for ``child`` as the journal holds it."""
    if finished(child):
        return ()
    if child.axes.checkpoint_state == "ELIGIBLE":
        return ("promote_checkpoint",)
    if child.state_name in SUBMITTABLE_STATES or reconciled_absent(child):
        return ("resume_delivery",)
    if child.state_name in OBSERVING_STATES:
        return ("poll_receipt",)
    if child.state_name in VERIFYING_STATES:
        return ("verify_counters",)
    if child.state_name in IN_FLIGHT_STATES:
        # Left in SUBMITTING by a run that may be gone: once its mutation lease expires,
        # `reconcile --apply` records the lost submit and proves the effect in one command
        # (`resume --apply` records it UNKNOWN); both wait for the lease.
        return ("wait_for_mutation_lease", "reconcile_delivery_key", "inspect_evidence")
    return ACTIONS.get(child.last_error_code or "", ("inspect_evidence",))


def resume_step(child: ChildOperation | ChildStanding,
                plan: RestDeliveryPlan | None = None) -> str:
    """What driving ``child`` does next, checked in the supervisor loop's own order.

    ``take_over_unknown``: an in-flight child whose mutation lease has expired is recorded as an
    UNKNOWN effect under an observation lease and never resent (with ``plan``:
    ``take_over_replay`` when the plan's certification covers a same-key replay, which the
    journal still bounds by the first attempt's age); ``finalize_empty_input``: a
    sealed child without rows is finalized without a request by the profile's empty-input
    policy (with ``plan``: unless the plan :func:`submits_empty`); ``stop``: the child is blocked
    and the run stops with its code, sending nothing.
    """
    if child.state_name in IN_FLIGHT_STATES:
        return ("take_over_replay" if plan is not None and takeover_certified(plan)
                else "take_over_unknown")
    if (child.state_name == S.SEALED and child.without_rows
            and not (plan is not None and submits_empty(plan))):
        return "finalize_empty_input"
    if child.state_name in SUBMITTABLE_STATES or reconciled_absent(child):
        return "submit"
    if child.state_name in OBSERVING_STATES:
        return "poll_receipt"
    if child.state_name in VERIFYING_STATES:
        return "verify_counters"
    if child.axes.checkpoint_state == "ELIGIBLE":
        return "promote_checkpoint"
    if finished(child):
        return "none"
    return "stop"


def awaits_operator(child: ChildOperation | ChildStanding) -> bool:
    """``child`` holds the delivery until an operator acts: it stops the run with its code, or
    it waits in RETRY_WAIT after a cause only an operator fixes (:data:`AWAITS_FIX_CODES`)."""
    return resume_step(child) == "stop" or (child.state_name in SUBMITTABLE_STATES
                                            and child.last_error_code in AWAITS_FIX_CODES)


def delivery_status(children: Iterable[ChildOperation | ChildStanding]) -> DeliveryStatus:
    """Where a whole delivery stands, from what resuming would do with each of its children.

    ``completed``: every child promoted. ``blocked``: a child holds the run until an operator
    acts (:func:`awaits_operator`). ``pending``: a durable receipt awaits the receiver's job
    (``poll_receipt``) and no request may be on the wire. ``in_progress``: anything else a
    resume drives on its own (a submit, a request on the wire, a verification, a promotion).
    """
    listed = list(children)
    steps = {resume_step(child) for child in listed}
    if steps <= {"none"}:
        return "completed"
    if any(awaits_operator(child) for child in listed):
        return "blocked"
    if "poll_receipt" in steps and "take_over_unknown" not in steps:
        return "pending"
    return "in_progress"
