"""The actions table and the runbook follow the contract: every stop code a supervised transition
can record has its actions, and the runbook names exactly those, with the contract's effect."""

from __future__ import annotations

import re
import typing

import pytest

from dpone.contracts import ERROR_CATALOG
from dpone.contracts.design import load_state_contract
from dpone.executor.supervisor import ACTIONS
from dpone.executor.supervisor._actions import OperatorAction
from dpone.executor.supervisor._transitions import REQUESTED
from support.common import ROOT

RUNBOOK = ROOT / "docs" / "runbooks" / "delivery-outcomes.md"
CONTRACT = load_state_contract()
ACTION_NAMES = frozenset(typing.get_args(OperatorAction))


def _recorded_codes() -> dict[str, set[str]]:
    """Each REST_DELIVERY_* code a requested transition may record -> the remote effects of the
    tuples it records it in."""
    effects: dict[str, set[str]] = {}
    for steps in REQUESTED.values():
        for step in steps:
            listed = CONTRACT.transitions[step.transition]
            target = CONTRACT.tuples[listed.target]
            for code in listed.error_codes:
                effects.setdefault(code, set()).add(str(target.remote_effect))
    return effects


RECORDED = _recorded_codes()


def _rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in RUNBOOK.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `([^`]+)` \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return rows


def test_every_code_a_supervised_transition_records_has_actions() -> None:
    assert RECORDED, "the supervisor requests no transition that records a stop code"
    assert sorted(set(RECORDED) - set(ACTIONS)) == []


def test_every_action_entry_is_a_catalog_code_with_known_actions() -> None:
    for code, actions in ACTIONS.items():
        assert code in ERROR_CATALOG, code
        assert actions and set(actions) <= ACTION_NAMES, code


@pytest.mark.parametrize("code", sorted(ACTIONS))
def test_the_runbook_names_exactly_the_actions_of_each_stop(code: str) -> None:
    row = _rows()[code]
    named = set(re.findall(r"`([a-z_]+)`", row[-1])) & ACTION_NAMES
    assert named == set(ACTIONS[code]), f"{code}: the runbook names {sorted(named)}"


@pytest.mark.parametrize("code", sorted(RECORDED))
def test_the_runbook_states_the_effect_the_contract_records(code: str) -> None:
    effect = _rows()[code][1]
    assert effect in RECORDED[code], f"{code}: the runbook says {effect}, the contract records " \
        f"{sorted(RECORDED[code])}"
