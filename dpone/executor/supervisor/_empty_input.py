"""A sealed child without rows sends nothing: no MAY_ATTEMPT marker, no attempt, no request.

The planner keeps date windows without rows as children so the coverage proof stays
contiguous; the profile's ``result_policy.empty_input`` decides how such a child is finalized,
under the mutation lease and a revision CAS like any other step:

* ``skip``: ``sealed_empty_input_skipped`` finalizes it not started (effect NONE_PROVEN) without
  a checkpoint of its own; it holds nothing to promote, so the contiguous frontier passes over it;
* ``promote``, ``incremental_append``: ``sealed_empty_input_verified`` records 0 of 0 rows
  verified against the complete frozen parent (appending nothing is vacuous; the checkpoint
  becomes eligible and is promoted with the frontier). The journal rechecks the overlap fence
  first: a stale generation is refused for good, as a submit would be.

Under ``promote`` a ``partition_replace`` child without rows never comes here: replacing a
window with nothing deletes the receiver's rows there, a real effect, so it is submitted like
any other child (its sealed empty payload is the replacement) and the receiver's counters
verify it (``submits_empty``).
"""

from __future__ import annotations

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation
from dpone.executor.supervisor._context import Run
from dpone.executor.supervisor._results import DeliveryBlocked
from dpone.executor.supervisor._submit import PERMANENT_FENCE_REFUSALS
from dpone.executor.supervisor._transitions import EMPTY_INPUT, FENCE_REFUSED


def finalize_empty(run: Run, operation: ChildOperation) -> ChildOperation | DeliveryBlocked:
    """Finalize the sealed child ``operation`` (no rows) without a request, by the profile's
    empty-input policy."""
    policy = run.plan.profile.snapshot.result_policy.empty_input
    # The parent artifact is the complete frozen read of the boundary (verified at freeze).
    finalized = EMPTY_INPUT.get((policy, run.plan.source_boundary.mutation_kind))
    if finalized is None:  # an empty replacement is submitted, never finalized here
        raise DponeError(code="journal.illegal_transition", operation_id=operation.operation_id,
                         message=f"a {run.plan.source_boundary.mutation_kind} child without rows "
                         "replaces its window with nothing at the receiver; it is submitted, "
                         "never verified without a request")
    with run.steps.lease(operation.operation_id, "mutation") as lease:
        if policy == "skip":
            return run.steps.step(operation, lease, *finalized)
        try:
            return run.steps.step(operation, lease, *finalized)
        except DponeError as refusal:
            if refusal.code not in PERMANENT_FENCE_REFUSALS:
                raise
            refused = run.steps.step(operation, lease, *FENCE_REFUSED, error_code=refusal.code)
            return run.blocked(refused, refusal.code)
