"""Builders and drivers for the journal contract suite (port-only: no adapter internals)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from dpone.contracts import content_digest
from dpone.contracts.design import load_state_contract
from dpone.contracts.journal import (
    ChildAdmission,
    ChildOperation,
    DeliveryJournalPort,
    Generation,
    Lease,
    ParentAdmission,
    ParentOperation,
    Tenancy,
    TransitionRequest,
)
from dpone.journal._marker import marker_digest

ENVIRONMENT = "journal-test"
NAMESPACE = content_digest(b"namespace:journal-test")
DOMAIN = content_digest(b"domain:mock.measurements")
OTHER_DOMAIN = content_digest(b"domain:mock.other")
JAN = dt.date(2026, 1, 1)


def day(n: int) -> dt.date:
    return JAN + dt.timedelta(days=n)


def generation(end_day: int, revision: int = 0) -> Generation:
    moment = dt.datetime.combine(day(end_day), dt.time(), tzinfo=dt.UTC)
    return Generation(scheduled_interval_end_utc=moment, correction_revision=revision)


def tenancy(namespace: str = NAMESPACE) -> Tenancy:
    return Tenancy(operation_namespace=namespace, tenant_id="tenant-a", environment_id=ENVIRONMENT)


def admission(scopes: Sequence[tuple[int, int]], *, gen: Generation | None = None,
              kind: str = "partition_replace", domain: str = DOMAIN, salt: str = "",
              max_remote_jobs: int = 4, route: str = "route-a",
              namespace: str = NAMESPACE, replay_fence_certified: bool = True,
              max_submit_attempts: int = 5,
              replay_retention_s: int | None = None) -> ParentAdmission:
    """A parent over day-offset scopes ``[(from, to), ...]``; ``salt`` changes every intent."""
    gen = gen or generation(max(to for _, to in scopes))
    children = []
    for ordinal, (lo, hi) in enumerate(scopes, start=1):
        key = content_digest(f"{route}|{lo}|{hi}|{kind}|{gen.scheduled_interval_end_utc}|"
                             f"{gen.correction_revision}".encode())
        intent = content_digest(f"{key}|{salt}".encode())
        children.append(ChildAdmission(
            ordinal=ordinal, delivery_key=key,
            receiver_mutation_key=content_digest(f"{namespace}|{key}".encode()),
            mutation_intent_digest=intent, scope_from=day(lo), scope_to=day(hi),
            first_row=ordinal * 100, row_count=100,
            payload_key=f"payloads/{intent[7:]}.csv.gz", payload_digest=intent,
            payload_document_key=f"payloads/{intent[7:]}.json", wire_bytes=1000))
    plan = content_digest("|".join(c.mutation_intent_digest for c in children).encode())
    return ParentAdmission(
        tenancy=tenancy(namespace), logical_route_id=route, plan_digest=plan,
        parent_plan_digest=content_digest(f"parent|{plan}|{salt}".encode()),
        frozen_parent_digest=content_digest(f"frozen|{salt}".encode()),
        profile_contract_digest=content_digest(b"profile"), effect_conflict_domain=domain,
        mutation_kind=kind,  # type: ignore[arg-type]
        generation=gen, boundary_from=day(min(lo for lo, _ in scopes)),
        boundary_to=day(max(hi for _, hi in scopes)), max_remote_jobs=max_remote_jobs,
        children=tuple(children), replay_fence_certified=replay_fence_certified,
        max_submit_attempts=max_submit_attempts, replay_retention_s=replay_retention_s)


def step(journal: DeliveryJournalPort, child: ChildOperation, transition_id: str, kind: str,
         name: str, facts: Iterable[str], lease: Lease, **fields: object) -> ChildOperation:
    """Request ``transition_id`` proving ``facts``; ``kind``/``name`` state the trigger the test
    expects, which must be the contract's (the journal takes it from the contract)."""
    listed = load_state_contract().transitions.get(transition_id)
    if listed is not None:
        assert (listed.trigger.kind, listed.trigger.evidence) == (kind, name), transition_id
    request = TransitionRequest(operation_id=child.operation_id, transition_id=transition_id,
                                expected_revision=child.revision, facts=tuple(facts),
                                **fields)  # type: ignore[arg-type]
    return journal.transition(request, lease)


def submit(journal: DeliveryJournalPort, operation_id: str, holder: str = "worker-1",
           lease: Lease | None = None) -> tuple[ChildOperation, Lease]:
    """The pre-submit sequence: lease, plan the attempt, bind its marker, enter SUBMITTING."""
    lease = lease or journal.acquire_lease(operation_id, "mutation", holder, 60)
    child = journal.get_child(operation_id)
    plan = journal.plan_attempt(operation_id, lease)
    return journal.enter_submitting(plan, marker_digest(plan.marker), lease, child.revision), lease


def sync_success(journal: DeliveryJournalPort, child: ChildOperation,
                 lease: Lease) -> ChildOperation:
    return step(journal, child, "submitting_sync_success", "submit_response",
                "SYNC_SUCCESS_WITH_COUNTERS", ["response_recorded"], lease)


def complete_full(journal: DeliveryJournalPort, operation_id: str) -> ChildOperation:
    """Submit, succeed synchronously and verify full effect: checkpoint ELIGIBLE."""
    child, lease = submit(journal, operation_id)
    child = sync_success(journal, child, lease)
    observer = journal.acquire_lease(operation_id, "observation", "verifier", 60)
    return step(journal, child, "verifying_succeeded_verified_full", "verification",
                "FULL_EFFECT_VERIFIED", ["verification_recorded", "all_rows_accounted"], observer)


def two_deliveries(journal: DeliveryJournalPort) -> tuple[ParentOperation, ParentOperation]:
    """Two admitted deliveries of the audit-trail tests: one of two children whose first child
    is completed (its transitions write audit rows of their own), and one of another route."""
    parent = journal.admit_parent(admission([(0, 10), (10, 20)])).parent
    other = journal.admit_parent(admission([(40, 50)], route="route-b")).parent
    complete_full(journal, parent.children[0].operation_id)
    return parent, other


def complete_failed(journal: DeliveryJournalPort, operation_id: str) -> ChildOperation:
    """Submit, get a certified rejection and verify no effect: final_failed_none."""
    child, lease = submit(journal, operation_id)
    child = step(journal, child, "submitting_sync_rejected", "submit_response",
                 "SYNC_CERTIFIED_REJECTION", ["response_recorded"], lease)
    observer = journal.acquire_lease(operation_id, "observation", "verifier", 60)
    return step(journal, child, "verifying_failed_no_effect", "verification",
                "NO_EFFECT_VERIFIED", ["verification_recorded", "absence_proven"], observer,
                error_code="receiver.terminal_failure")  # as the supervisor's verifier records
