"""One read-only observation of one child's durable receipt: what an orchestrator's trigger does
while a delivery is pending.

:func:`observe_receipt` never submits, verifies or promotes: it polls the receipt of a child in
ACCEPTED/WAITING once it is due (GET only, under an observation lease, recorded by a revision
CAS) and returns the child as the journal holds it afterwards. A child that is not observing,
or whose next check is not due, is returned unchanged without a request. Running it twice, or
from two processes, is harmless: the lease and the CAS let one poll record, and a poll that
finds the child already moved on records nothing. A receipt already polled
``observability.max_observations`` times raises ``observation.limit_reached`` (nothing sent).
"""

from __future__ import annotations

from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import ChildOperation, SupervisorJournal
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import Clock, ImmutableArtifactPort, RestTransportPort
from dpone.executor.supervisor._actions import OBSERVING_STATES
from dpone.executor.supervisor._context import open_run
from dpone.executor.supervisor._observe import OBSERVATION_LIMIT, observe
from dpone.executor.supervisor._results import DeliveryBlocked
from dpone.executor.supervisor._resume import check_plan, read_sealed


def observe_receipt(plan: RestDeliveryPlan, operation_id: str, journal: SupervisorJournal,
                    artifacts: ImmutableArtifactPort, transport: RestTransportPort, *,
                    holder: str, clock: Clock | None = None,
                    leases: LeasePolicy | None = None) -> ChildOperation:
    """Poll the receipt of child ``operation_id`` once when it is observing and due; return the
    child as the journal holds it afterwards.

    ``plan`` is the plan the journal names; it and the child's sealed payload document are
    checked against the journal before the request (``REST_DELIVERY_INTENT_CONFLICT``).
    """
    operation = journal.get_child(operation_id)
    if operation.state_name not in OBSERVING_STATES:
        return operation
    run = open_run(plan, journal, artifacts, transport, holder=holder, clock=clock,
                   leases=leases)
    parent = run.steps.load_parent(operation.parent_id)
    check_plan(plan, parent)
    sealed = read_sealed(parent, operation, artifacts)
    if run.due_in(operation.next_check_after) > 0:
        return operation
    outcome = observe(run, operation, sealed, wait=False, once=True)
    if isinstance(outcome, DeliveryBlocked) and outcome.code == OBSERVATION_LIMIT:
        # Nothing is polled any more, yet the child stays observing: say so, or a trigger
        # would wait on it for ever.
        raise DponeError(code=outcome.code, operation_id=operation_id,
                         message=f"child {operation_id} was observed "
                         f"{outcome.evidence.get('observations')} times, the profile's "
                         "observability.max_observations: nothing more is polled",
                         details=dict(outcome.evidence))
    return journal.get_child(operation_id)
