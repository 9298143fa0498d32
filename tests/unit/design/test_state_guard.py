"""The runtime guard: typed answers for legal, illegal and stale transitions."""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys
from typing import Any

import pytest

from dpone.contracts import (
    AcknowledgementState,
    CheckpointState,
    DponeError,
    ExecutionState,
    RemoteEffect,
    VerificationState,
)
from dpone.contracts.state import (
    Counters,
    Evidence,
    IllegalTransition,
    LeaseKind,
    ListedTransition,
    MonotonicityViolation,
    RefusalReason,
    RevisionConflict,
    StateContract,
    StateTuple,
    TransitionGuard,
    TransitionRefused,
)


def evidence_for(transition: ListedTransition, **changes: Any) -> Evidence:
    base = Evidence(
        kind=transition.trigger.kind, name=transition.trigger.evidence, facts=transition.requires,
        reconciliation_id="rec-1" if transition.reconciliation else None,
        evidence_digest="sha256:" + "a" * 64 if transition.reconciliation else None)
    return dataclasses.replace(base, **changes)


def check(contract: StateContract, source: str, transition_id: str, **overrides: Any):
    transition = contract.transitions.get(transition_id)
    kwargs: dict[str, Any] = {
        "expected_revision": 7, "actual_revision": 7, "journal_epoch": 2, "current_epoch": 2,
        "lease_kind": transition.lease if transition else LeaseKind.MUTATION,
        "evidence": evidence_for(transition) if transition else Evidence(
            kind=contract.transitions["sealed_submit"].trigger.kind, name="X"),
    }
    kwargs.update(overrides)
    return TransitionGuard(contract).check(contract.tuples[source], transition_id, **kwargs)


def test_a_listed_transition_is_admitted_with_its_target(contract) -> None:
    decision = check(contract, "sealed", "sealed_submit")
    assert decision.target == contract.tuples["submitting"]
    assert decision.source == contract.tuples["sealed"]
    counters = Counters(journal_revision=7, journal_epoch=2).advanced(decision)
    assert (counters.journal_revision, counters.attempt_ordinal) == (8, 1)


def _refusal(exc_type: type[TransitionRefused], reason: RefusalReason, *args: Any,
             **kwargs: Any) -> TransitionRefused:
    with pytest.raises(exc_type) as caught:
        check(*args, **kwargs)
    assert caught.value.reason is reason
    return caught.value


def test_unknown_transition(contract) -> None:
    _refusal(IllegalTransition, RefusalReason.UNKNOWN_TRANSITION, contract, "sealed",
             "sealed_cancel_job")


def test_transition_from_another_tuple(contract) -> None:
    refusal = _refusal(IllegalTransition, RefusalReason.WRONG_SOURCE_TUPLE, contract, "planned",
                       "sealed_submit")
    assert refusal.transition_id == "sealed_submit"


def test_illegal_source_tuple(contract) -> None:
    finalized_running = StateTuple(ExecutionState.FINALIZED, RemoteEffect.UNKNOWN,
                                   AcknowledgementState.RUNNING, VerificationState.NOT_RUN,
                                   CheckpointState.BLOCKED)
    assert not contract.is_legal(finalized_running)
    transition = contract.transitions["waiting_poll_running"]
    with pytest.raises(IllegalTransition) as caught:
        TransitionGuard(contract).check(
            finalized_running, transition.id, expected_revision=1, actual_revision=1,
            lease_kind=LeaseKind.OBSERVATION, journal_epoch=1, current_epoch=1,
            evidence=evidence_for(transition))
    assert caught.value.reason is RefusalReason.ILLEGAL_TUPLE


def test_wrong_lease_never_authorizes_a_mutation(contract) -> None:
    _refusal(IllegalTransition, RefusalReason.WRONG_LEASE, contract, "retry_wait",
             "retry_wait_due", lease_kind=LeaseKind.OBSERVATION)


def test_retry_wait_needs_request_not_started_evidence_and_budget(contract) -> None:
    transition = contract.transitions["submitting_not_started_retry"]
    _refusal(IllegalTransition, RefusalReason.EVIDENCE_MISMATCH, contract, "submitting",
             transition.id,
             evidence=evidence_for(transition, name="REQUEST_MAY_HAVE_REACHED_RECEIVER"))
    refusal = _refusal(IllegalTransition, RefusalReason.GUARD_NOT_SATISFIED, contract,
                       "submitting", transition.id,
                       evidence=evidence_for(transition,
                                             facts=frozenset({"request_not_started_proof"})))
    assert "retry_budget_remaining" in refusal.message


def test_stale_revision_and_epoch_are_revision_conflicts(contract) -> None:
    refusal = _refusal(RevisionConflict, RefusalReason.STALE_REVISION, contract, "sealed",
                       "sealed_submit", expected_revision=6)
    assert not isinstance(refusal, IllegalTransition)
    _refusal(RevisionConflict, RefusalReason.STALE_EPOCH, contract, "sealed", "sealed_submit",
             journal_epoch=1)


def test_reconciliation_needs_new_ids_and_new_evidence(contract) -> None:
    opening = contract.transitions["reconcile_open_not_accepted_unknown_unverified"]
    source = opening.source
    _refusal(IllegalTransition, RefusalReason.RECONCILIATION_ID_REQUIRED, contract, source,
             opening.id, evidence=evidence_for(opening, reconciliation_id=None))
    _refusal(IllegalTransition, RefusalReason.RECONCILIATION_ID_REUSED, contract, source,
             opening.id, prior_reconciliation_ids={"rec-1"})
    assert check(contract, source, opening.id).target.execution_state is ExecutionState.VERIFYING
    resolve = contract.transitions["reconcile_not_accepted_unknown_to_none"]
    _refusal(IllegalTransition, RefusalReason.EVIDENCE_DIGEST_REQUIRED, contract,
             resolve.source, resolve.id, evidence=evidence_for(resolve, evidence_digest=None))
    _refusal(IllegalTransition, RefusalReason.EVIDENCE_DIGEST_REUSED, contract, resolve.source,
             resolve.id, prior_evidence_digests={"sha256:" + "a" * 64})
    decision = check(contract, resolve.source, resolve.id, lease_kind=LeaseKind.OPERATOR)
    assert decision.target.remote_effect is RemoteEffect.NONE_PROVEN
    _refusal(IllegalTransition, RefusalReason.WRONG_LEASE, contract, resolve.source, resolve.id,
             lease_kind=LeaseKind.OBSERVATION)


def test_counters_refuse_any_decrease() -> None:
    before = Counters(journal_revision=3, journal_epoch=2, highest_applied_generation=5)
    before.ensure_monotonic(dataclasses.replace(before, highest_applied_generation=6))
    with pytest.raises(MonotonicityViolation) as caught:
        before.ensure_monotonic(dataclasses.replace(before, journal_epoch=1), "failover")
    assert caught.value.reason is RefusalReason.MONOTONIC_DECREASE
    assert "journal_epoch" in caught.value.message


def test_state_tuple_is_frozen(contract) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        contract.initial_tuple.remote_effect = RemoteEffect.UNKNOWN  # type: ignore[misc]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["automatic_transitions"][0].update({"to": "nowhere"}), "'nowhere' is not a legal"),
    (lambda d: d["legal_tuples"].append(dict(d["legal_tuples"][0])), "listed twice"),
    (lambda d: d.update({"schema": "dpone.other.v1"}), "expected 'dpone.rest-bulk"),
    (lambda d: d["monotonic_fields"].pop(), "exactly the fields of Counters"),
    (lambda d: d["automatic_transitions"][0]["cas"].update({"lease": "root"}), "not a LeaseKind"),
])
def test_from_document_refuses_a_malformed_contract(shipped_report, edit, message) -> None:
    data = copy.deepcopy(shipped_report.data)
    edit(data)
    with pytest.raises(DponeError) as caught:
        StateContract.from_document(data)
    assert caught.value.code == "contract.schema_invalid"
    assert message in caught.value.message


def test_the_guard_module_is_pure() -> None:
    probe = ("import sys, dpone.contracts.state, dpone.contracts._state_reference; "
             "print(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'ruamel', 'lark', 'click', 'jsonschema', 'httpx', 'psycopg'}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def _paths_from_initial(contract: StateContract) -> dict[str, list[ListedTransition]]:
    """A shortest transition path from the initial tuple to every tuple (breadth first)."""
    paths: dict[str, list[ListedTransition]] = {contract.initial: []}
    frontier = [contract.initial]
    while frontier:
        following = []
        for name in frontier:
            for transition in contract.outgoing(name):
                if transition.target not in paths:
                    paths[transition.target] = [*paths[name], transition]
                    following.append(transition.target)
        frontier = following
    return paths


def test_every_listed_transition_is_admitted_on_a_real_path(contract) -> None:
    """Drive each transition through the guard after walking to its source from the start."""
    guard = TransitionGuard(contract)
    paths = _paths_from_initial(contract)
    assert set(paths) == set(contract.tuples)
    for transition in contract.transitions.values():
        state, counters = contract.initial_tuple, Counters(journal_epoch=3)
        ids: set[str] = set()
        for serial, step in enumerate([*paths[transition.source], transition]):
            evidence = evidence_for(step, reconciliation_id=f"rec-{serial}"
                                    if step.reconciliation else None)
            decision = guard.check(
                state, step.id, expected_revision=counters.journal_revision,
                actual_revision=counters.journal_revision, lease_kind=step.lease,
                journal_epoch=3, current_epoch=3, evidence=evidence,
                prior_reconciliation_ids=frozenset(ids))
            after = counters.advanced(decision)
            counters.ensure_monotonic(after, step.id)
            if evidence.reconciliation_id:
                ids.add(evidence.reconciliation_id)
            state, counters = decision.target, after
            assert contract.is_legal(state) and not contract.violated_combinations(state)
        assert state == contract.tuples[transition.target]
