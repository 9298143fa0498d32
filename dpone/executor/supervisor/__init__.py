"""The delivery supervisor: drives admitted children through the journal's guarded transitions.

This package sees the journal, the artifact store, the network and time only through their
ports (:class:`~dpone.contracts.ports.DeliveryJournalPort`,
:class:`~dpone.contracts.ports.ImmutableArtifactPort`,
:class:`~dpone.contracts.ports.RestTransportPort`, :class:`~dpone.contracts.ports.Clock`).
:func:`deliver` covers both protocol families: the synchronous batch and the asynchronous bulk
job with receipt polling; :func:`resume` drives an admitted delivery from the journal, its plan
and its sealed payload documents alone; :func:`observe_receipt` is one read-only receipt poll
(an orchestrator's trigger).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpone.contracts._exports import lazy_exports

if TYPE_CHECKING:
    from dpone.executor.supervisor._actions import (
        ACTIONS,
        DELIVERY_STATUSES,
        IN_FLIGHT_STATES,
        allowed_actions,
        awaits_operator,
        delivery_status,
        finished,
        resume_step,
    )
    from dpone.executor.supervisor._admission import parent_admission, plan_tenancy
    from dpone.executor.supervisor._context import RetryWait
    from dpone.executor.supervisor._decide import check_profile, counter_verdict, family_of
    from dpone.executor.supervisor._deliver import deliver, deliver_sync
    from dpone.executor.supervisor._job_status import (
        JobStatus,
        classify_status,
        echo_matches,
        expected_echo,
        phase_of,
    )
    from dpone.executor.supervisor._journal_writer import Heartbeat
    from dpone.executor.supervisor._quiet import QuietPolls
    from dpone.executor.supervisor._request import outbound_request, poll_request
    from dpone.executor.supervisor._results import (
        ChildReceipt,
        DeliveryBlocked,
        DeliveryCompleted,
        DeliveryPending,
        DeliveryResult,
    )
    from dpone.executor.supervisor._resume import observe_receipt, resume, sealed_children
    from dpone.executor.supervisor._takeover import (
        LeaseWait,
        await_lease,
        projected_lost_submit,
        record_lost_submit,
    )

__all__ = [
    "ACTIONS",
    "DELIVERY_STATUSES",
    "IN_FLIGHT_STATES",
    "ChildReceipt",
    "DeliveryBlocked",
    "DeliveryCompleted",
    "DeliveryPending",
    "DeliveryResult",
    "Heartbeat",
    "JobStatus",
    "LeaseWait",
    "QuietPolls",
    "RetryWait",
    "allowed_actions",
    "await_lease",
    "awaits_operator",
    "check_profile",
    "classify_status",
    "counter_verdict",
    "deliver",
    "deliver_sync",
    "delivery_status",
    "echo_matches",
    "expected_echo",
    "family_of",
    "finished",
    "observe_receipt",
    "outbound_request",
    "parent_admission",
    "phase_of",
    "plan_tenancy",
    "poll_request",
    "projected_lost_submit",
    "record_lost_submit",
    "resume",
    "resume_step",
    "sealed_children",
]

# Each name is imported from its module on first use (PEP 562): importing one piece of this
# package does not load the libraries of the others.
__getattr__ = lazy_exports(__name__, {
    "ACTIONS": "_actions",
    "DELIVERY_STATUSES": "_actions",
    "IN_FLIGHT_STATES": "_actions",
    "allowed_actions": "_actions",
    "awaits_operator": "_actions",
    "delivery_status": "_actions",
    "finished": "_actions",
    "resume_step": "_actions",
    "parent_admission": "_admission",
    "plan_tenancy": "_admission",
    "RetryWait": "_context",
    "check_profile": "_decide",
    "counter_verdict": "_decide",
    "family_of": "_decide",
    "deliver": "_deliver",
    "deliver_sync": "_deliver",
    "Heartbeat": "_journal_writer",
    "QuietPolls": "_quiet",
    "JobStatus": "_job_status",
    "classify_status": "_job_status",
    "echo_matches": "_job_status",
    "expected_echo": "_job_status",
    "phase_of": "_job_status",
    "observe_receipt": "_resume",
    "outbound_request": "_request",
    "poll_request": "_request",
    "ChildReceipt": "_results",
    "DeliveryBlocked": "_results",
    "DeliveryCompleted": "_results",
    "DeliveryPending": "_results",
    "DeliveryResult": "_results",
    "resume": "_resume",
    "sealed_children": "_resume",
    "LeaseWait": "_takeover",
    "await_lease": "_takeover",
    "projected_lost_submit": "_takeover",
    "record_lost_submit": "_takeover",
})
