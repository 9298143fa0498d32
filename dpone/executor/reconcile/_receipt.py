"""A read-only poll of a receipt the operator found (``--receipt-id``), with the profile's poll.

The poll is the same GET that ``poll_receipt`` sends, rendered from the profile's poll template
with the operator's receipt id; nothing is ever submitted. Where the profile certifies a key
echo, an answer that does not echo this child's key names the job of another delivery key and
is refused (``reconcile.key_mismatch``): nothing of it is recorded.

:func:`classify_status` is the one reading of an answer about a job (expired status, key echo,
phase, counters); the receipt poll uses it, and so does the query by key when the profile
certifies that a found answer is the job's status document (``answer: job_status``).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpone.contracts import DponeError
from dpone.contracts.journal import ChildOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedChild
from dpone.contracts.transport import Response
from dpone.executor.supervisor import classify_status, family_of, poll_request
from dpone.executor.supervisor._transitions import PollOutcome
from dpone.executor.transport import RestTransportPort

MAX_RECEIPT_ID_CHARS = 256


@dataclass(frozen=True)
class PolledReceipt:
    """What one read-only poll of the receipt answered: the outcome and its bounded scalars
    (``http_status``, ``phase``, counters, ``key_echo``), and the receipt to record."""

    outcome: PollOutcome
    values: dict[str, str | int]
    receipt: dict[str, str | int]


def receipt_field(plan: RestDeliveryPlan) -> str:
    """The receipt field the poll path renders (``id`` when the profile names one)."""
    names = list(plan.profile.snapshot.acknowledgement.receipt)
    if "id" in names:
        return "id"
    if len(names) == 1:
        return names[0]
    raise DponeError(code="input.invalid_argument",
                     message=f"profile {plan.profile.snapshot.ref} has no single receipt field "
                     "to hold --receipt-id; reconcile with --evidence instead")


def poll_receipt(plan: RestDeliveryPlan, transport: RestTransportPort, operation: ChildOperation,
                 sealed: SealedChild, receipt_id: str) -> PolledReceipt:
    """Poll ``receipt_id`` read-only and classify the answer for ``operation``."""
    profile = plan.profile.snapshot
    poll = profile.acknowledgement.poll
    if poll is None or not family_of(profile).observes:
        raise DponeError(code="input.invalid_argument", operation_id=operation.operation_id,
                         message=f"profile {profile.ref} ({profile.protocol_family}) has no "
                         "receipt to poll; reconcile with --evidence FILE instead")
    if not receipt_id or len(receipt_id) > MAX_RECEIPT_ID_CHARS or not receipt_id.isprintable():
        raise DponeError(code="input.invalid_argument", operation_id=operation.operation_id,
                         message=f"--receipt-id must be 1..{MAX_RECEIPT_ID_CHARS} printable "
                         "characters")
    receipt: dict[str, str | int] = {receipt_field(plan): receipt_id}
    response = transport.send(poll_request(plan, receipt))
    if not isinstance(response, Response) or not (
            response.status == 200 or response.status in poll.expired_statuses):
        detail = (f"HTTP {response.status}" if isinstance(response, Response)
                  else f"{response.kind.value}: {response.detail}")
        raise DponeError(code="receiver.unavailable", operation_id=operation.operation_id,
                         message=f"the receipt poll of {receipt_id} got no answer about the job "
                         f"({detail}); nothing was recorded")
    status = classify_status(plan, operation, sealed, response)
    if status.about_another_key:
        raise DponeError(code="reconcile.key_mismatch", operation_id=operation.operation_id,
                         message=f"receipt {receipt_id} answers about a job that does not echo "
                         f"the delivery key of child {operation.ordinal}",
                         details={"receipt_id": receipt_id,
                                  "delivery_key": operation.delivery_key})
    return PolledReceipt(outcome=status.outcome, values=status.values,
                         receipt={**receipt, **status.values})
