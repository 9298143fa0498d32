"""The delivery supervisor: drives admitted children through the journal's guarded transitions.

This package sees the journal, the artifact store and the network only through their ports
(:class:`~dpone.contracts.journal.DeliveryJournalPort`,
:class:`~dpone.contracts.ports.ImmutableArtifactPort`,
:class:`~dpone.executor.transport.RestTransportPort`). :func:`deliver_sync` covers the
synchronous batch family.
"""

from dpone.executor.supervisor._admission import parent_admission
from dpone.executor.supervisor._request import outbound_request
from dpone.executor.supervisor._results import (
    ChildReceipt,
    DeliveryBlocked,
    DeliveryCompleted,
    DeliveryResult,
)
from dpone.executor.supervisor._sync import deliver_sync

__all__ = [
    "ChildReceipt",
    "DeliveryBlocked",
    "DeliveryCompleted",
    "DeliveryResult",
    "deliver_sync",
    "outbound_request",
    "parent_admission",
]
