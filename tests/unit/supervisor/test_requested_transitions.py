"""Every transition the supervisor can request exists in the contract, under the lease it holds,
with the guard facts the contract requires; none is named by a string."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dpone.contracts.design import load_state_contract
from dpone.contracts.state import StateContract, Transition
from dpone.executor import supervisor
from dpone.executor.supervisor._transitions import (
    REQUESTED,
    RESPONSE,
    SOURCE_STATES,
    SYNC_SUCCESS_LANDS_IN,
    VERIFIED_FULL,
    Step,
)

SUPERVISOR = Path(supervisor.__file__).parent
CONTRACT: StateContract = load_state_contract()
STEPS = [(lease, step) for lease, steps in REQUESTED.items() for step in steps]


@pytest.mark.parametrize(("lease", "step"), STEPS, ids=[step.transition for _, step in STEPS])
def test_every_requested_transition_is_listed_with_the_lease_and_facts(
        lease: str, step: Step) -> None:
    listed = CONTRACT.transitions.get(step.transition)
    assert listed is not None, f"{step.transition} is not a transition of the contract"
    assert listed.lease == lease, f"{step.transition} needs the {listed.lease} lease, not {lease}"
    missing = listed.requires - set(step.facts)
    assert not missing, f"{step.transition}: the supervisor never proves {sorted(missing)}"


@pytest.mark.parametrize(("transition", "state"), sorted(SOURCE_STATES.items()))
def test_every_keyed_lookup_starts_from_the_transitions_source(transition: Transition,
                                                                state: str) -> None:
    assert CONTRACT.transitions[transition].source == state


# Taken by the journal's critical SUBMITTING transaction, not requested by the supervisor.
ENTERED_BY_THE_JOURNAL = {Transition.SUBMITTING_FENCED_REPLAY, Transition.REPLAY_AGAIN,
                          Transition.SUBMITTING_TAKEOVER_FENCED_REPLAY,
                          Transition.REPLAY_TAKEOVER_FENCED_REPLAY}
# Listed by the contract for outcomes this supervisor does not distinguish (yet): a queued job
# is observed as running, a job expiry as the receipt's, a synchronous rejection as not
# recognized.
NOT_DISTINGUISHED = {Transition.ACCEPTED_POLL_QUEUED, Transition.ACCEPTED_POLL_JOB_EXPIRED,
                     Transition.WAITING_POLL_JOB_EXPIRED, Transition.SUBMITTING_SYNC_REJECTED,
                     Transition.REPLAY_SYNC_REJECTED}


def test_every_outcome_of_a_driven_state_is_requested() -> None:
    """A transition the contract adds from a state the supervisor's tables drive is noticed."""
    requested = {step.transition for _, step in STEPS}
    driven = set(SOURCE_STATES.values())
    unrequested = {t.id for state in driven for t in CONTRACT.outgoing(state) if t.automatic}
    assert unrequested - requested == ENTERED_BY_THE_JOURNAL | NOT_DISTINGUISHED


def _step_calls() -> list[tuple[str, ast.Call]]:
    calls = []
    for path in sorted(SUPERVISOR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "step"):
                calls.append((path.name, node))
    return calls


def test_no_transition_is_named_by_a_string() -> None:
    calls = _step_calls()
    assert len(calls) >= 13
    for name, call in calls:
        for arg in call.args:
            assert not isinstance(arg, ast.Constant | ast.JoinedStr), (
                f"{name}:{call.lineno}: a transition or fact named by a string literal")


def test_a_synchronous_success_lands_where_its_settled_verification_starts() -> None:
    """The answer and its verification are settled in one transaction: the verification the
    supervisor asks for must start where the recorded success leaves the child."""
    successes = [step for (_, outcome), step in RESPONSE.items() if outcome == "sync_success"]
    assert len(successes) == 2
    for step in successes:
        assert CONTRACT.transitions[step.transition].target == SYNC_SUCCESS_LANDS_IN
    assert CONTRACT.transitions[VERIFIED_FULL[SYNC_SUCCESS_LANDS_IN].transition].source \
        == SYNC_SUCCESS_LANDS_IN
