"""The delivery runbook names every stop the supervisor can report, with the catalog's exit
class and the supervisor's allowed actions."""

from __future__ import annotations

import re

import pytest

from dpone.contracts import ERROR_CATALOG
from dpone.executor.supervisor import ACTIONS
from support.common import ROOT

RUNBOOK = ROOT / "docs" / "runbooks" / "delivery-outcomes.md"
STOPS = sorted({*ACTIONS, "REST_DELIVERY_INTENT_CONFLICT", "receiver.unavailable",
                "receiver.rate_limited"})


def _rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in RUNBOOK.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `([^`]+)` \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return rows


@pytest.mark.parametrize("code", STOPS)
def test_every_stop_has_a_row_with_its_exit_class_and_actions(code: str) -> None:
    row = _rows().get(code)
    assert row is not None, f"{code} is missing from {RUNBOOK.name}"
    assert row[0] == str(int(ERROR_CATALOG[code].exit_class))
    for action in ACTIONS.get(code, ()):
        assert f"`{action}`" in row[-1], f"{code}: action {action} is not in the runbook"
