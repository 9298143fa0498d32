"""Ask the receiver, read-only, what it holds under one child's key (``acknowledgement.query_by_key``).

:func:`query_by_key` sends one ``GET`` rendered from the profile's lookup path with the child's
``receiver_mutation_key`` / ``delivery_key`` (relative to the binding's authority, with its
credential, like the receipt poll) and classifies the answer; it never sends a mutation and
records nothing. The result is one of:

* :class:`KeyFound` — a found status whose certified key echo (if any) is this child's key: the
  receipt in the shape the journal keeps receipts (``{"id": ...}``) plus bounded evidence, and,
  where the profile certifies the found answer as the job's status document
  (``answer: job_status``), that answer read as the poll reads it (``status``);
* :class:`KeyAbsentProven` — an absent status in an environment where the profile certifies
  absence, once the child's latest submit attempt started at least ``receipt_ttl_s +
  skew_margin_s`` ago: proof that the child was NOT applied;
* :class:`KeyAbsentUnproven` — an absent status that proves nothing: the environment is not
  certified (``not_certified_here``), or the horizon has not passed yet
  (``horizon_not_reached``, with the instant it will);
* :class:`KeyQueryUnavailable` — no answer about this key: a transport failure, a status the
  profile does not classify, an unreadable found answer, or a found answer echoing another key.

Time base: the journal's ``ChildOperation`` has no attempt times, so the caller passes
``latest_attempt_at``, the ``started_at`` of the child's latest attempt row (a request of any
attempt may still be in flight until the horizon after the latest one has passed).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field

from dpone.contracts import DponeError, StrictModel
from dpone.contracts.journal import ChildOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import RestTransportPort
from dpone.contracts.profile import KeyEcho, QueryByKey, ResponseBounds
from dpone.contracts.sealed import SealedChild
from dpone.executor.supervisor import JobStatus, classify_status
from dpone.executor.transport import ExtractionError, Failure, OutboundRequest, Response, extract
from dpone.grammar import TemplateContext, parse_template

Scalar = str | int
EchoState = Literal["matched", "mismatch", "not_certified"]


class KeyFound(StrictModel):
    """The receiver holds a job or batch under this child's key."""

    outcome: Literal["found"] = "found"
    receipt: dict[str, Scalar]
    evidence: dict[str, Scalar]
    status: JobStatus | None = None
    """The found answer read as the job's status (``answer: job_status`` only); no receipt
    poll is needed to prove the effect."""


class KeyAbsentProven(StrictModel):
    """A certified absent answer past the horizon: the child was not applied."""

    outcome: Literal["absent_proven"] = "absent_proven"
    evidence: dict[str, Scalar]


class KeyAbsentUnproven(StrictModel):
    """An absent answer that proves nothing here or yet; the effect stays unknown."""

    outcome: Literal["absent_unproven"] = "absent_unproven"
    reason: Literal["not_certified_here", "horizon_not_reached"]
    proof_possible_at: dt.datetime | None = None
    """When an absent answer would prove absence (``horizon_not_reached`` only)."""
    evidence: dict[str, Scalar]


class KeyQueryUnavailable(StrictModel):
    """No answer about this key; ``transport_failure`` may be asked again, the others are
    receiver answers that prove nothing about this child."""

    outcome: Literal["unavailable"] = "unavailable"
    reason: Literal["transport_failure", "unclassified_status", "unreadable_answer",
                    "key_echo_mismatch"]
    evidence: dict[str, Scalar]


KeyQueryResult = Annotated[KeyFound | KeyAbsentProven | KeyAbsentUnproven | KeyQueryUnavailable,
                           Field(discriminator="outcome")]


def key_query_of(plan: RestDeliveryPlan) -> QueryByKey:
    """The plan's certified query by key; refused when the profile declares none."""
    query = plan.profile.snapshot.acknowledgement.query_by_key
    if query is None:
        raise DponeError(code="input.invalid_argument",
                         message=f"profile {plan.profile.ref} declares no query by key",
                         hint="prove the effect with --receipt-id or --evidence instead")
    return query


def key_query_request(plan: RestDeliveryPlan, operation: ChildOperation) -> OutboundRequest:
    """The read-only lookup of ``operation``'s key, rendered from the profile's path."""
    query = key_query_of(plan)
    path = parse_template(query.path, context=TemplateContext.PATH).render(
        {"receiver_mutation_key": operation.receiver_mutation_key,
         "delivery_key": operation.delivery_key})
    return OutboundRequest(method=query.method, path=path)


def query_by_key(transport: RestTransportPort, plan: RestDeliveryPlan, operation: ChildOperation,
                 sealed: SealedChild, *, now: dt.datetime,
                 latest_attempt_at: dt.datetime) -> KeyQueryResult:
    """Look the child up by its key and classify the answer (see the module docstring)."""
    query = key_query_of(plan)
    if now.tzinfo is None or latest_attempt_at.tzinfo is None:
        raise DponeError(code="input.invalid_argument",
                         message="the query by key compares time-zone-aware instants only")
    if sealed.identities.receiver_mutation_key != operation.receiver_mutation_key:
        raise DponeError(code="REST_DELIVERY_INTENT_CONFLICT", operation_id=operation.operation_id,
                         message="the sealed child is not the one this operation admitted",
                         details={"receiver_mutation_key": operation.receiver_mutation_key})
    outcome = transport.send(key_query_request(plan, operation))
    if isinstance(outcome, Failure):
        return KeyQueryUnavailable(reason="transport_failure", evidence={
            "transport_phase": outcome.phase.value, "transport_failure": outcome.kind.value})
    evidence: dict[str, Scalar] = {"http_status": outcome.status}
    if outcome.status in query.found_statuses:
        return _found(plan, query, operation, sealed, outcome, evidence)
    if outcome.status not in query.absence.statuses:
        return KeyQueryUnavailable(reason="unclassified_status", evidence=evidence)
    absence = query.absence
    if plan.environment.ref not in absence.certified_environments:
        return KeyAbsentUnproven(reason="not_certified_here", evidence=evidence)
    horizon = latest_attempt_at + dt.timedelta(seconds=absence.receipt_ttl_s + absence.skew_margin_s)
    if now < horizon:
        return KeyAbsentUnproven(reason="horizon_not_reached", proof_possible_at=horizon,
                                 evidence=evidence)
    return KeyAbsentProven(evidence=evidence)


def _found(plan: RestDeliveryPlan, query: QueryByKey, operation: ChildOperation,
           sealed: SealedChild, response: Response,
           evidence: dict[str, Scalar]) -> KeyFound | KeyQueryUnavailable:
    bounds = plan.profile.snapshot.observability.response_bounds
    echo = _echo(query.key_echo, operation, sealed, response, bounds)
    evidence["key_echo"] = echo
    if echo == "mismatch":  # an answer about another key: nothing of it is this child's
        return KeyQueryUnavailable(reason="key_echo_mismatch", evidence=evidence)
    try:
        receipt = extract(query.receipt, response, bounds)
    except ExtractionError:
        return KeyQueryUnavailable(reason="unreadable_answer", evidence=evidence)
    if not set(plan.profile.snapshot.acknowledgement.receipt) <= set(receipt):
        return KeyQueryUnavailable(reason="unreadable_answer", evidence=evidence)
    if query.answer == "receipt":
        return KeyFound(receipt=receipt, evidence=evidence)
    status = classify_status(plan, operation, sealed, response)
    if status.about_another_key:  # the poll's echo names another key's job
        return KeyQueryUnavailable(reason="key_echo_mismatch",
                                   evidence={**evidence, "key_echo": "mismatch"})
    return KeyFound(receipt=receipt, evidence=evidence, status=status)


def _echo(echo: KeyEcho | None, operation: ChildOperation, sealed: SealedChild,
          response: Response, bounds: ResponseBounds) -> EchoState:
    """Whether the answer echoes the key as the sealed request carried it (the poll's rule)."""
    if echo is None:
        return "not_certified"
    expected = (sealed.request.filename if echo.form == "payload_filename"
                else operation.receiver_mutation_key)
    try:
        values = extract({"key_echo": echo.extractor()}, response, bounds)
    except ExtractionError:
        return "mismatch"
    return "matched" if expected is not None and values.get("key_echo") == expected else "mismatch"
