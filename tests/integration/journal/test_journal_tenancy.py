"""Namespace scope: two operation namespaces share one environment id and one journal store (two
tenants whose environments are both ``journal-test``); a journal opened for one namespace
refuses every read and every move of the other's operations with ``journal.foreign_namespace``,
and the refused calls leave nothing behind. Runs on both dialects."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dpone.contracts import DponeError, content_digest
from dpone.contracts.journal import (
    AttemptPlan,
    DeliveryJournalPort,
    Lease,
    LeaseClaim,
    OperatorActionRecord,
    ParentOperation,
    ReconcileRequest,
    TransitionRequest,
)
from dpone.journal.postgres import PostgresJournal
from dpone.journal.sqlite import SqliteJournal
from support.journal import ENVIRONMENT, OTHER_DOMAIN, admission, complete_full, tenancy

TENANT_A = content_digest(b"namespace:tenant-a")
TENANT_B = content_digest(b"namespace:tenant-b")
FOREIGN = "journal.foreign_namespace"
LATER = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


def _open(journal_dialect: str, request: pytest.FixtureRequest,
          namespace: str | None) -> PostgresJournal | SqliteJournal:
    if journal_dialect == "postgres":
        return PostgresJournal(request.getfixturevalue("journal_dsn"), environment_id=ENVIRONMENT,
                               operation_namespace=namespace)
    path: Path = request.getfixturevalue("journal_path")
    return SqliteJournal(path, environment_id=ENVIRONMENT, operation_namespace=namespace)


@pytest.fixture
def scoped(journal_dialect: str, request: pytest.FixtureRequest
           ) -> Iterator[Callable[[str | None], DeliveryJournalPort]]:
    """Open the test's journal store scoped to a namespace (None: by environment id only)."""
    opened: list[PostgresJournal | SqliteJournal] = []

    def open_scoped(namespace: str | None) -> DeliveryJournalPort:
        opened.append(_open(journal_dialect, request, namespace))
        return opened[-1]

    yield open_scoped
    for journal in opened:
        journal.close()


def _lease(operation_id: str, kind: str = "mutation") -> Lease:
    return Lease(operation_id=operation_id, kind=kind,  # type: ignore[arg-type]
                 holder="intruder", token=1, expires_at=LATER)


def _attempt(operation_id: str) -> AttemptPlan:
    return AttemptPlan(operation_id=operation_id, attempt_ordinal=1, attempt_id="intruder-1",
                       marker_key="markers/x/1.json", marker={})


def _foreign_calls(parent: ParentOperation, attempt_id: str
                   ) -> dict[str, Callable[[DeliveryJournalPort], object]]:
    """Every port method that takes an operation id (or a request for another namespace),
    aimed at tenant A's delivery ``parent`` (child 1 delivered, child 2 sealed)."""
    done, sealed = parent.children[0].operation_id, parent.children[1].operation_id
    claim = LeaseClaim(operation_id=sealed, kind="mutation", holder="intruder", ttl_seconds=60)
    checkpoint = LeaseClaim(operation_id=parent.parent_id, kind="checkpoint", holder="intruder",
                            ttl_seconds=60)
    request_a = admission([(0, 10), (10, 20)], namespace=TENANT_A)
    return {
        "load_parent": lambda j: j.load_parent(parent.parent_id),
        "get_child": lambda j: j.get_child(done),
        "list_attempts": lambda j: j.list_attempts(done),
        "list_observations": lambda j: j.list_observations(done),
        "list_operator_actions": lambda j: j.list_operator_actions([parent.parent_id, done]),
        "list_live_leases": lambda j: j.list_live_leases(parent.parent_id),
        "list_audit": lambda j: j.list_audit(operation_id=parent.parent_id, limit=10),
        "find_parent": lambda j: j.find_parent(request_a.tenancy, request_a.parent_plan_digest),
        "check_admitted_leases": lambda j: j.check_admitted_leases(
            tenancy(TENANT_A), request_a.plan_digest, request_a.boundary_from,
            request_a.boundary_to),
        "admit_parent": lambda j: j.admit_parent(request_a),
        "acquire_lease": lambda j: j.acquire_lease(sealed, "mutation", "intruder", 60),
        "release_lease": lambda j: j.release_lease(_lease(sealed)),
        "renew_lease": lambda j: j.renew_lease(_lease(sealed), 60),
        "check_lease": lambda j: j.check_lease(_lease(sealed)),
        "begin_attempt": lambda j: j.begin_attempt(sealed, "intruder", 60),
        "plan_attempt": lambda j: j.plan_attempt(sealed, _lease(sealed)),
        "enter_submitting": lambda j: j.enter_submitting(
            _attempt(sealed), "sha256:" + "1" * 64, _lease(sealed), 1),
        "record_orphan_marker": lambda j: j.record_orphan_marker(
            _attempt(sealed), "sha256:" + "1" * 64, _lease(sealed), 1),
        "transition": lambda j: j.transition(TransitionRequest(
            operation_id=sealed, transition_id="sealed_expired", expected_revision=1), claim),
        "settle_response": lambda j: j.settle_response(TransitionRequest(
            operation_id=sealed, transition_id="submitting_sync_success", expected_revision=1),
            _lease(sealed)),
        "reconcile": lambda j: j.reconcile(ReconcileRequest(
            operation_id=sealed, expected_revision=1, open_transition_id="x",
            resolve_transition_id="y", facts=(), reconciliation_id="rec-intruder",
            evidence_digest="sha256:" + "2" * 64, actor="intruder"), _lease(sealed, "operator")),
        "promote_frontier": lambda j: j.promote_frontier(parent.parent_id, checkpoint),
        "record_operator_action": lambda j: j.record_operator_action(OperatorActionRecord(
            operation_id=parent.parent_id, command="resume", actor="intruder",
            before_revision=0, after_revision=0)),
        "repair_reservation": lambda j: j.repair_reservation(attempt_id, actor="intruder"),
    }


CALLS = (
    "load_parent", "get_child", "list_attempts", "list_observations", "list_operator_actions",
    "list_live_leases", "list_audit",
    "find_parent", "check_admitted_leases", "admit_parent", "acquire_lease", "release_lease",
    "renew_lease", "check_lease", "begin_attempt", "plan_attempt", "enter_submitting",
    "record_orphan_marker", "transition", "settle_response", "reconcile", "promote_frontier",
    "record_operator_action", "repair_reservation")


ENVIRONMENT_LEVEL = frozenset({
    "contract", "now", "list_deliveries", "journal_epoch", "mutation_gate", "gate_status",
    "set_mutation_gate", "environment_id", "operation_namespace", "migrate", "close",
    "set_revocation", "revocation_status", "take_rate_turn", "release_active_slot",
    "payload_retention", "expire_payloads", "journal_identity", "record_environment",
    "metrics_snapshot"})
"""Journal members that take no operation id: environment-wide (``list_deliveries`` filters by
namespace, tested below; the revocation list is the platform's, for every namespace; the metrics
snapshot is a platform operator's view of every namespace, naming none), the scope
itself, the dialect's own, the receiver account's shared rate turns and slots (a receiver
account's limits hold across every namespace that sends to it), and the journal's own identity
(its id and the environments it records, one row per namespace)."""


def test_every_port_method_is_namespace_scoped_or_environment_level() -> None:
    members = {name for journal in (PostgresJournal, SqliteJournal)
               for name in dir(journal) if not name.startswith("_")}
    parent = ParentOperation.model_construct(parent_id="p", children=(
        _child("c1"), _child("c2")))
    assert set(_foreign_calls(parent, "a")) == set(CALLS)
    assert members - ENVIRONMENT_LEVEL == set(CALLS), (
        "a journal port method that takes an operation id needs a foreign-namespace case here")


def _child(operation_id: str) -> object:
    from dpone.contracts.journal import ChildOperation  # noqa: PLC0415

    return ChildOperation.model_construct(operation_id=operation_id)


def _snapshot(journal: DeliveryJournalPort, parent: ParentOperation) -> object:
    ids = [parent.parent_id, *(c.operation_id for c in parent.children)]
    return (journal.load_parent(parent.parent_id),
            [journal.list_attempts(i) for i in ids[1:]],
            [journal.list_observations(i) for i in ids[1:]],
            journal.list_operator_actions(ids))


@pytest.mark.parametrize("call", CALLS)
def test_another_namespace_cannot_read_or_move_an_operation(
        scoped: Callable[[str | None], DeliveryJournalPort], call: str) -> None:
    tenant_a, tenant_b = scoped(TENANT_A), scoped(TENANT_B)
    parent = tenant_a.admit_parent(admission([(0, 10), (10, 20)], namespace=TENANT_A)).parent
    complete_full(tenant_a, parent.children[0].operation_id)
    [attempt] = tenant_a.list_attempts(parent.children[0].operation_id)
    tenant_b.admit_parent(admission([(0, 10)], namespace=TENANT_B, domain=OTHER_DOMAIN))
    before = _snapshot(tenant_a, parent)

    with pytest.raises(DponeError) as refused:
        _foreign_calls(parent, str(attempt["attempt_id"]))[call](tenant_b)

    assert refused.value.code == FOREIGN, refused.value.message
    assert TENANT_A not in refused.value.message + str(refused.value.details)
    assert _snapshot(tenant_a, parent) == before  # nothing changed
    lease = tenant_a.acquire_lease(parent.children[1].operation_id, "mutation", "owner", 60)
    assert lease.token == 1  # the intruder left no lease behind


def test_each_namespace_lists_only_its_own_deliveries_and_an_unscoped_journal_lists_both(
        scoped: Callable[[str | None], DeliveryJournalPort]) -> None:
    tenant_a, tenant_b, unscoped = scoped(TENANT_A), scoped(TENANT_B), scoped(None)
    mine = tenant_a.admit_parent(admission([(0, 10)], namespace=TENANT_A)).parent
    theirs = tenant_b.admit_parent(admission([(0, 10)], namespace=TENANT_B,
                                             domain=OTHER_DOMAIN)).parent

    assert [d.parent_id for d in tenant_a.list_deliveries(10)] == [mine.parent_id]
    assert [d.parent_id for d in tenant_b.list_deliveries(10)] == [theirs.parent_id]
    assert {d.parent_id for d in unscoped.list_deliveries(10)} == {mine.parent_id,
                                                                  theirs.parent_id}
    assert unscoped.load_parent(theirs.parent_id) == tenant_b.load_parent(theirs.parent_id)


def test_the_same_delivery_key_in_two_namespaces_is_two_operations(
        scoped: Callable[[str | None], DeliveryJournalPort]) -> None:
    """Admission is unique per (namespace, delivery key): the second namespace's admission of
    the same key is a new operation, never a resume of the first's."""
    tenant_a, tenant_b = scoped(TENANT_A), scoped(TENANT_B)
    first = tenant_a.admit_parent(admission([(0, 10)], namespace=TENANT_A))
    second = tenant_b.admit_parent(admission([(0, 10)], namespace=TENANT_B, domain=OTHER_DOMAIN))

    assert not first.resumed and not second.resumed
    assert first.parent.parent_id != second.parent.parent_id
    [a], [b] = first.parent.children, second.parent.children
    assert a.delivery_key == b.delivery_key
    assert tenant_a.get_child(a.operation_id).tenancy.operation_namespace == TENANT_A
    assert tenant_b.get_child(b.operation_id).tenancy.operation_namespace == TENANT_B
