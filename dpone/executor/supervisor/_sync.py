"""The supervisor of the synchronous batch family: admit, submit each child once, verify, promote.

Children run serially in ordinal order. Before each submit the attempt's MAY_ATTEMPT marker is
published create-if-absent and the journal commits SUBMITTING; only then is the sealed payload
sent. A request that provably never started is retried within the profile's submit budget; one
that may have reached the receiver without a certified fence is recorded as an unknown effect
and the delivery stops: it is never resent.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final

from dpone.contracts import DponeError, RemoteEffect, canonical_json
from dpone.contracts.journal import (
    ChildOperation,
    DeliveryJournalPort,
    Lease,
    LeaseKindName,
    ParentOperation,
    TransitionRequest,
)
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.profile import Extractor
from dpone.contracts.sealed import SealedChild, SealedTopology
from dpone.executor.supervisor._admission import parent_admission
from dpone.executor.supervisor._request import check_payload, outbound_request
from dpone.executor.supervisor._results import (
    ChildReceipt,
    DeliveryBlocked,
    DeliveryCompleted,
    DeliveryResult,
)
from dpone.executor.transport import (
    ExtractionError,
    Failure,
    Response,
    RestTransportPort,
    TransportPhase,
    extract,
    next_delay,
)

SYNC_FAMILY: Final = "sync_batch"
DONE_STATES: Final = frozenset({"final_succeeded_full_eligible", "final_succeeded_full_promoted"})
SUBMITTABLE_STATES: Final = frozenset({"sealed", "retry_wait"})
LEASE_MARGIN_S: Final = 30
DUE_MARGIN_S: Final = 0.05

ACTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN": ("inspect_evidence", "reconcile_delivery_key"),
    "REST_DELIVERY_PARTIALLY_APPLIED": ("inspect_evidence", "reconcile_delivery_key",
                                        "run_certified_compensation"),
    "REST_DELIVERY_COUNT_MISMATCH": ("inspect_evidence", "reconcile_delivery_key"),
    "REST_DELIVERY_PROTOCOL_UNKNOWN": ("inspect_evidence", "reconcile_delivery_key"),
    "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET": ("retry_same_generation",),
}
"""What an operator may do after each blocking code; never an automatic resend."""


def deliver_sync(plan: RestDeliveryPlan, topology: SealedTopology, journal: DeliveryJournalPort,
                 artifacts: ImmutableArtifactPort, transport: RestTransportPort, *, holder: str,
                 sleep: Callable[[float], None] = time.sleep,
                 rng: random.Random | None = None) -> DeliveryResult:
    """Deliver every sealed child of ``topology`` through the synchronous batch profile.

    Admits the complete parent (resuming an admitted one), then submits, verifies and promotes
    each child in ordinal order. Returns :class:`DeliveryCompleted` once every child is fully
    applied and the frontier reaches the last child, else the first :class:`DeliveryBlocked`.
    """
    profile = plan.profile.snapshot
    if profile.protocol_family != SYNC_FAMILY or profile.verification.counters_from != "submit_response":
        raise DponeError(code="REST_DELIVERY_PROTOCOL_UNKNOWN",
                         message=f"profile {profile.ref} is not a synchronous batch profile")
    if plan.fence.type != "none":
        raise DponeError(code="REST_DELIVERY_UNSAFE_RETRY",
                         message="certified fenced replay is not supported by this supervisor")
    if not topology.children:
        raise DponeError(code="REST_DELIVERY_PROTOCOL_UNKNOWN",
                         message="an empty topology is decided by the empty-input policy")
    parent = journal.admit_parent(parent_admission(plan, topology)).parent
    run = _SyncRun(plan, topology, journal, artifacts, transport, holder, sleep,
                   rng or random.Random())
    return run.deliver(parent)


@dataclass
class _SyncRun:
    plan: RestDeliveryPlan
    topology: SealedTopology
    journal: DeliveryJournalPort
    artifacts: ImmutableArtifactPort
    transport: RestTransportPort
    holder: str
    sleep: Callable[[float], None]
    rng: random.Random
    frontier: int = 0
    sealed: dict[int, SealedChild] = field(default_factory=dict)

    def deliver(self, parent: ParentOperation) -> DeliveryResult:
        self.sealed = {child.descriptor.ordinal: child for child in self.topology.children}
        self.frontier = parent.checkpoint_frontier
        receipts: list[ChildReceipt] = []
        for operation in sorted(parent.children, key=lambda child: child.ordinal):
            outcome = self._child(parent.parent_id, operation)
            if isinstance(outcome, DeliveryBlocked):
                return outcome
            receipts.append(ChildReceipt(operation_id=outcome.operation_id,
                                         ordinal=outcome.ordinal, state_name=outcome.state_name,
                                         attempt_ordinal=outcome.attempt_ordinal,
                                         receipt=_scalars(outcome.receipt or {})))
            self.frontier = self._promote(parent.parent_id)
        return DeliveryCompleted(parent_id=parent.parent_id, checkpoint_frontier=self.frontier,
                                 children=tuple(receipts))

    # --- one child ------------------------------------------------------------------------

    def _child(self, parent_id: str, operation: ChildOperation) -> ChildOperation | DeliveryBlocked:
        sealed = self.sealed[operation.ordinal]
        if operation.state_name in SUBMITTABLE_STATES:
            submitted = self._submit(parent_id, operation, sealed)
            if isinstance(submitted, DeliveryBlocked):
                return submitted
            operation = submitted
        if operation.state_name == "verifying_succeeded":
            return self._verify(parent_id, operation, sealed)
        if operation.state_name in DONE_STATES:
            return operation
        return self._blocked(parent_id, operation,
                             operation.last_error_code or "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")

    def _submit(self, parent_id: str, operation: ChildOperation,
                sealed: SealedChild) -> ChildOperation | DeliveryBlocked:
        check_payload(sealed, self.artifacts)
        request = outbound_request(sealed, self.artifacts)
        started = time.monotonic()
        with self._lease(operation.operation_id, "mutation") as lease:
            while True:
                if operation.state_name == "retry_wait":
                    self._wait_until(operation.next_check_after)
                attempt = self.journal.plan_attempt(operation.operation_id, lease)
                marker = self.artifacts.put_bytes(attempt.marker_key, canonical_json(attempt.marker))
                operation = self.journal.enter_submitting(attempt, marker.digest, lease,
                                                          operation.revision)
                try:
                    outcome = self.transport.send(request)
                except DponeError:
                    # The transport refuses a malformed request before sending any byte.
                    self._step(operation, lease, "submitting_not_started_final", "transport",
                               "REQUEST_NOT_STARTED",
                               ["request_not_started_proof", "retry_unavailable"])
                    raise
                if isinstance(outcome, Response):
                    return self._record_response(parent_id, operation, outcome, lease)
                if outcome.phase is not TransportPhase.NOT_STARTED:
                    operation = self._step(operation, lease, "submitting_may_have_reached_unfenced",
                                           "transport", "REQUEST_MAY_HAVE_REACHED_RECEIVER",
                                           ["no_certified_fence"],
                                           error_code="REST_DELIVERY_REMOTE_EFFECT_UNKNOWN")
                    return self._blocked(parent_id, operation,
                                         "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN", outcome)
                delay = self._retry_delay(operation, started)
                if delay is None:
                    operation = self._step(operation, lease, "submitting_not_started_final",
                                           "transport", "REQUEST_NOT_STARTED",
                                           ["request_not_started_proof", "retry_unavailable"])
                    return self._blocked(parent_id, operation,
                                         "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET", outcome)
                due = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=delay)
                operation = self._step(operation, lease, "submitting_not_started_retry",
                                       "transport", "REQUEST_NOT_STARTED",
                                       ["request_not_started_proof", "retry_budget_remaining"],
                                       next_check_after=due)

    def _record_response(self, parent_id: str, operation: ChildOperation, response: Response,
                         lease: Lease) -> ChildOperation | DeliveryBlocked:
        profile = self.plan.profile.snapshot
        values: dict[str, str | int] | None = None
        if response.status in profile.acknowledgement.accepted_statuses:
            with contextlib.suppress(ExtractionError):
                values = extract(self._extractors(), response,
                                 profile.observability.response_bounds)
        if values is None or "accepted_rows" not in values:
            operation = self._step(operation, lease, "submitting_response_not_recognized",
                                   "submit_response", "RESPONSE_NOT_RECOGNIZED",
                                   ["response_recorded"], receipt={"http_status": response.status},
                                   error_code="REST_DELIVERY_PROTOCOL_UNKNOWN")
            return self._blocked(parent_id, operation, "REST_DELIVERY_PROTOCOL_UNKNOWN",
                                 extra={"http_status": response.status})
        return self._step(operation, lease, "submitting_sync_success", "submit_response",
                          "SYNC_SUCCESS_WITH_COUNTERS", ["response_recorded"],
                          receipt={"http_status": response.status, **values})

    def _verify(self, parent_id: str, operation: ChildOperation,
                sealed: SealedChild) -> ChildOperation | DeliveryBlocked:
        receipt = operation.receipt or {}
        expected = sealed.descriptor.row_count
        accepted = receipt.get("accepted_rows")
        declared = self.plan.profile.snapshot.verification.rejected_rows is not None
        rejected = receipt.get("rejected_rows") if declared else 0
        with self._lease(operation.operation_id, "observation") as observer:
            if accepted == expected and rejected == 0:
                return self._step(operation, observer, "verifying_succeeded_verified_full",
                                  "verification", "FULL_EFFECT_VERIFIED",
                                  ["verification_recorded", "all_rows_accounted"])
            if isinstance(accepted, int) and isinstance(rejected, int) \
                    and accepted + rejected == expected:
                evidence = self.artifacts.put_bytes(
                    f"evidence/{operation.operation_id}/attempt-{operation.attempt_ordinal}"
                    "/result.json",
                    canonical_json({"operation_id": operation.operation_id,
                                    "expected_rows": expected, "accepted_rows": accepted,
                                    "rejected_rows": rejected}))
                operation = self._step(operation, observer, "verifying_succeeded_verified_partial",
                                       "verification", "PARTIAL_EFFECT_VERIFIED",
                                       ["verification_recorded", "result_evidence_published"],
                                       evidence_digest=evidence.digest,
                                       error_code="REST_DELIVERY_PARTIALLY_APPLIED")
                return self._blocked(parent_id, operation, "REST_DELIVERY_PARTIALLY_APPLIED")
            operation = self._step(operation, observer, "verifying_succeeded_not_provable",
                                   "verification", "COUNTERS_MISSING_OR_CONTRADICTORY",
                                   ["verification_recorded"],
                                   error_code="REST_DELIVERY_COUNT_MISMATCH")
            return self._blocked(parent_id, operation, "REST_DELIVERY_COUNT_MISMATCH",
                                 extra={"expected_rows": expected})

    # --- journal and timing helpers ---------------------------------------------------------

    def _promote(self, parent_id: str) -> int:
        with self._lease(parent_id, "checkpoint") as lease:
            return self.journal.promote_frontier(parent_id, lease)

    @contextlib.contextmanager
    def _lease(self, operation_id: str, kind: LeaseKindName) -> Iterator[Lease]:
        ttl = self.plan.profile.snapshot.timeouts.request_total_s + LEASE_MARGIN_S
        lease = self.journal.acquire_lease(operation_id, kind, self.holder, ttl)
        try:
            yield lease
        finally:
            with contextlib.suppress(DponeError):
                self.journal.release_lease(lease)

    def _step(self, operation: ChildOperation, lease: Lease, transition_id: str,
              evidence_kind: str, evidence_name: str, facts: Iterable[str],
              **fields: object) -> ChildOperation:
        request = TransitionRequest.model_validate({
            "operation_id": operation.operation_id, "transition_id": transition_id,
            "expected_revision": operation.revision, "evidence_kind": evidence_kind,
            "evidence_name": evidence_name, "facts": tuple(facts), **fields})
        return self.journal.transition(request, lease)

    def _extractors(self) -> dict[str, Extractor]:
        profile = self.plan.profile.snapshot
        extractors = dict(profile.acknowledgement.receipt)
        extractors["accepted_rows"] = profile.verification.accepted_rows
        if profile.verification.rejected_rows is not None:
            extractors["rejected_rows"] = profile.verification.rejected_rows
        return extractors

    def _retry_delay(self, operation: ChildOperation, started: float) -> float | None:
        backoff = self.plan.profile.snapshot.retry.submit
        remaining = backoff.budget_s - (time.monotonic() - started)
        if operation.attempt_ordinal >= backoff.max_attempts or remaining <= 0:
            return None
        delay = next_delay(operation.attempt_ordinal - 1, backoff, None, remaining, self.rng)
        return delay if isinstance(delay, float) else None

    def _wait_until(self, due: dt.datetime | None) -> None:
        if due is not None:
            pause = (due - dt.datetime.now(dt.UTC)).total_seconds()
            if pause > 0:
                self.sleep(pause + DUE_MARGIN_S)

    def _blocked(self, parent_id: str, operation: ChildOperation, code: str,
                 failure: Failure | None = None,
                 extra: Mapping[str, str | int] | None = None) -> DeliveryBlocked:
        evidence: dict[str, str | int] = {
            "state_name": operation.state_name, "revision": operation.revision,
            "attempt_ordinal": operation.attempt_ordinal, "ordinal": operation.ordinal,
            "delivery_key": operation.delivery_key}
        if failure is not None:
            evidence.update({"transport_phase": failure.phase.value,
                             "transport_failure": failure.kind.value})
        evidence.update(_scalars(operation.receipt or {}))
        evidence.update(extra or {})
        return DeliveryBlocked(code=code, parent_id=parent_id, operation_id=operation.operation_id,
                               remote_effect=RemoteEffect(operation.axes.remote_effect),
                               evidence=evidence, allowed_actions=ACTIONS.get(code, ("inspect_evidence",)),
                               checkpoint_frontier=self.frontier)


def _scalars(values: Mapping[str, object]) -> dict[str, str | int]:
    return {key: value for key, value in values.items()
            if isinstance(value, str | int) and not isinstance(value, bool)}
