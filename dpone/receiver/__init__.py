"""dpone.receiver: the certified local mock receiver (sync batch + async job) with fault injection.

A peer of the runtime: it imports only ``dpone.contracts`` of the product and decodes payloads
with its own readers.
"""

from dpone.receiver._app import asgi_app, create_app, receiver_state
from dpone.receiver._config import Clock, ManualClock, ReceiverConfig
from dpone.receiver._faults import FAULT_KINDS, FaultRule, FaultRuleError
from dpone.receiver._ledger import Ledger, Mutation
from dpone.receiver._readers import PayloadError
from dpone.receiver._state import ReceiverState
from dpone.receiver.server import ReceiverSetupError, ReceiverThread, run, serve

__all__ = [
    "FAULT_KINDS",
    "Clock",
    "FaultRule",
    "FaultRuleError",
    "Ledger",
    "ManualClock",
    "Mutation",
    "PayloadError",
    "ReceiverConfig",
    "ReceiverSetupError",
    "ReceiverState",
    "ReceiverThread",
    "asgi_app",
    "create_app",
    "receiver_state",
    "run",
    "serve",
]
