"""Stateful model test: random event sequences through the runtime guard.

A run starts at the initial tuple or at any legal tuple (the validator proves each reachable).
Every step either takes a listed transition with its proper evidence and CAS view, or tries a
refused one (another tuple's transition, a stale revision or epoch, a wrong lease, a missing
guard fact, wrong evidence, a reused reconciliation id) and checks the refusal left the state
unchanged. Invariants are asserted after every step.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
)

from dpone.contracts import AcknowledgementState as Ack
from dpone.contracts import CheckpointState, ExecutionState, RemoteEffect, VerificationState
from dpone.contracts.design import load_state_contract
from dpone.contracts.state import (
    Counters,
    Evidence,
    IllegalTransition,
    LeaseKind,
    ListedTransition,
    ReconciliationStep,
    RefusalReason,
    RevisionConflict,
    TransitionGuard,
    TriggerKind,
)

CONTRACT = load_state_contract()
GUARD = TransitionGuard(CONTRACT)
PROBES = ("another_tuple", "stale_revision", "stale_epoch", "wrong_lease", "missing_fact",
          "wrong_evidence", "reused_reconciliation_id", "unlisted")
STARTS = sorted(name for name in CONTRACT.tuples if CONTRACT.outgoing(name))
# What may enter RETRY_WAIT: the transport's proof that no request started (within the retry
# budget), or a recorded answer the profile certifies as refused before any effect.
# A terminal NONE_PROVEN tuple reached by an operator reconciliation may submit the same key
# again: that exit is guarded by this fact, which automatic verification never proves.
RECONCILED_ABSENCE = "absence_reconciled"
RETRY_WAIT_PROOFS = {
    "REQUEST_NOT_STARTED": {"request_not_started_proof", "retry_budget_remaining"},
    "REJECTED_BEFORE_EFFECT": {"response_recorded", "rejection_certified_before_effect"},
}


class DeliveryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.state = CONTRACT.initial_tuple
        self.counters = Counters(journal_epoch=1)
        self.snapshot = self.counters
        self.history: list[ListedTransition] = []
        self.reconciliation_ids: set[str] = set()
        self.digests: set[str] = set()
        self.serial = 0

    @initialize(start=st.one_of(st.just(CONTRACT.initial), st.sampled_from(STARTS)))
    def start(self, start: str) -> None:
        """Start at the initial tuple or at any tuple with an exit (every tuple is reachable)."""
        self.state = CONTRACT.tuples[start]

    # -- helpers --
    def outgoing(self) -> tuple[ListedTransition, ...]:
        return CONTRACT.outgoing(self.state)

    def evidence(self, transition: ListedTransition) -> Evidence:
        self.serial += 1
        return Evidence(
            kind=transition.trigger.kind, name=transition.trigger.evidence,
            facts=transition.requires,
            reconciliation_id=f"rec-{self.serial}" if transition.reconciliation else None,
            evidence_digest=f"sha256:{self.serial:064x}" if transition.reconciliation else None)

    def check(self, transition: ListedTransition, **overrides: object):
        kwargs: dict[str, object] = {
            "expected_revision": self.counters.journal_revision,
            "actual_revision": self.counters.journal_revision,
            "lease_kind": transition.lease,
            "journal_epoch": self.counters.journal_epoch,
            "current_epoch": self.counters.journal_epoch,
            "evidence": self.evidence(transition),
            "prior_reconciliation_ids": frozenset(self.reconciliation_ids),
            "prior_evidence_digests": frozenset(self.digests),
        }
        kwargs.update(overrides)
        return GUARD.check(self.state, transition.id, **kwargs)  # type: ignore[arg-type]

    def refused(self, exc: type[Exception], transition: ListedTransition, **overrides: object) -> None:
        before = (self.state, self.counters)
        with pytest.raises(exc):
            self.check(transition, **overrides)
        assert (self.state, self.counters) == before

    # -- refusal probes: each must be refused and leave the state unchanged --
    def probe(self, kind: str, data: st.DataObject) -> None:
        outgoing = self.outgoing()
        if kind == "another_tuple" or not outgoing:
            name = CONTRACT.name_of(self.state)
            others = [t for t in CONTRACT.transitions.values() if t.source != name]
            self.refused(IllegalTransition, data.draw(st.sampled_from(others)))
            return
        transition = data.draw(st.sampled_from(outgoing), label="probed")
        if kind == "stale_revision":
            delta = data.draw(st.sampled_from([-2, -1, 1, 2]))
            self.refused(RevisionConflict, transition,
                         expected_revision=self.counters.journal_revision + delta)
        elif kind == "stale_epoch":
            self.refused(RevisionConflict, transition,
                         journal_epoch=self.counters.journal_epoch - 1)
        elif kind == "wrong_lease":
            lease = data.draw(st.sampled_from([k for k in LeaseKind if k is not transition.lease]))
            self.refused(IllegalTransition, transition, lease_kind=lease)
        elif kind == "missing_fact" and transition.requires:
            dropped = data.draw(st.sampled_from(sorted(transition.requires)))
            self.refused(IllegalTransition, transition, evidence=dataclasses.replace(
                self.evidence(transition), facts=transition.requires - {dropped}))
        elif kind == "wrong_evidence":
            self.refused(IllegalTransition, transition, evidence=dataclasses.replace(
                self.evidence(transition), name="NOT_" + transition.trigger.evidence))
        elif (kind == "reused_reconciliation_id" and self.reconciliation_ids
              and transition.reconciliation is ReconciliationStep.OPEN):
            reused = data.draw(st.sampled_from(sorted(self.reconciliation_ids)))
            self.refused(IllegalTransition, transition, evidence=dataclasses.replace(
                self.evidence(transition), reconciliation_id=reused))
        elif kind == "unlisted":
            with pytest.raises(IllegalTransition) as caught:
                GUARD.check(self.state, "invoke_cancel_endpoint", expected_revision=0,
                            actual_revision=0, lease_kind=LeaseKind.MUTATION, journal_epoch=1,
                            current_epoch=1, evidence=Evidence(kind=TriggerKind.INTERNAL,
                                                               name="X"))
            assert caught.value.reason is RefusalReason.UNKNOWN_TRANSITION

    # -- one step: a refusal probe, sometimes a new epoch, then one listed transition (a
    # terminal tuple has none: there the step is the probe alone). One always-enabled rule
    # keeps Hypothesis from discarding runs on unsatisfiable rule filters.
    @rule(data=st.data(), probe=st.sampled_from(PROBES), new_epoch=st.integers(0, 9))
    def step(self, data: st.DataObject, probe: str, new_epoch: int) -> None:
        self.probe(probe, data)
        if new_epoch == 0:
            self.counters = dataclasses.replace(self.counters,
                                                journal_epoch=self.counters.journal_epoch + 1)
        if not self.outgoing():
            assert CONTRACT.is_terminal(self.state)
            return
        transition = data.draw(st.randoms(use_true_random=False)).choice(self.outgoing())
        evidence = self.evidence(transition)
        decision = self.check(transition, evidence=evidence)
        source, target = self.state, decision.target
        if source.remote_effect is RemoteEffect.UNKNOWN and target.remote_effect is not (
                RemoteEffect.UNKNOWN):
            assert not transition.automatic and transition.lease is LeaseKind.OPERATOR
            assert transition.reconciliation is ReconciliationStep.RESOLVE
        if (transition.automatic and source.acknowledgement_state != target.acknowledgement_state
                and RECONCILED_ABSENCE not in transition.requires):
            assert transition.trigger.kind in {TriggerKind.SUBMIT_RESPONSE,
                                               TriggerKind.OBSERVATION}
        if source.execution_state is ExecutionState.FINALIZED and transition.automatic and (
                target.execution_state is ExecutionState.SUBMITTING):
            # Only an operator reconciliation's proof of absence lets the same key go again.
            assert RECONCILED_ABSENCE in transition.requires
            assert source.remote_effect is RemoteEffect.NONE_PROVEN
        if target.execution_state is ExecutionState.RETRY_WAIT:
            assert target.remote_effect is RemoteEffect.NONE_PROVEN
            assert evidence.name in RETRY_WAIT_PROOFS
            assert RETRY_WAIT_PROOFS[evidence.name] <= evidence.facts
        after = self.counters.advanced(decision)
        self.counters.ensure_monotonic(after, transition.id)
        if evidence.reconciliation_id:
            self.reconciliation_ids.add(evidence.reconciliation_id)
        if evidence.evidence_digest:
            self.digests.add(evidence.evidence_digest)
        self.state, self.counters = target, after
        self.history.append(transition)

    # -- invariants after every step --
    @invariant()
    def tuple_is_legal(self) -> None:
        assert CONTRACT.is_legal(self.state)
        assert CONTRACT.violated_combinations(self.state) == ()
        state = self.state
        assert not (state.execution_state is ExecutionState.FINALIZED
                    and state.acknowledgement_state is Ack.RUNNING)
        assert not (state.remote_effect is RemoteEffect.UNKNOWN
                    and state.acknowledgement_state is Ack.RUNNING)
        if state.checkpoint_state in {CheckpointState.ELIGIBLE, CheckpointState.PROMOTED}:
            assert state.remote_effect is RemoteEffect.FULLY_APPLIED
            assert state.verification_state is VerificationState.PASSED

    @invariant()
    def counters_are_monotonic_and_match_the_history(self) -> None:
        self.snapshot.ensure_monotonic(self.counters)
        self.snapshot = self.counters
        assert self.counters.journal_revision == len(self.history)
        entered_submitting = sum(
            CONTRACT.tuples[t.target].execution_state is ExecutionState.SUBMITTING
            for t in self.history)
        assert self.counters.attempt_ordinal == entered_submitting
        observations = sum(t.trigger.kind is TriggerKind.OBSERVATION for t in self.history)
        assert self.counters.observation_ordinal == observations

    @invariant()
    def terminal_tuples_have_no_automatic_exit(self) -> None:
        if CONTRACT.is_terminal(self.state):
            assert not any(t.automatic and RECONCILED_ABSENCE not in t.requires
                           for t in self.outgoing())


DeliveryMachine.TestCase.settings = settings(max_examples=100, stateful_step_count=30,
                                             deadline=None)
TestDeliveryStateMachine = DeliveryMachine.TestCase

