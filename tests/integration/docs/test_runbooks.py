"""The runbooks' walkthroughs are real: each is run again and must match its runbook.

``scripts/generate_runbooks.py --check NAME`` runs ``docs/runbooks/walkthroughs/NAME.sh`` (the
real CLI against a real mock receiver on loopback, in a fresh directory) and compares its
transcript with the one the runbook shows, ids, instants and ages normalized. Every operator
situation the product stops with has its runbook.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from support.common import ROOT

REQUIRED = ("unknown-effect", "partial-application", "expired-receipt", "intent-conflict",
            "overlapping-generation", "checkpoint-gap", "epoch-blocked", "revoked",
            "payload-retention")


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_runbooks",
                                                  ROOT / "scripts" / "generate_runbooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


def test_every_operator_situation_has_a_runbook_with_a_walkthrough() -> None:
    books = GENERATOR.runbooks()
    assert sorted(books) == sorted(REQUIRED)
    for name in REQUIRED:
        assert books[name].name == f"{name}.md"
        assert (GENERATOR.WALKTHROUGHS / f"{name}.sh").is_file()


@pytest.mark.parametrize("name", sorted(GENERATOR.runbooks()))
def test_the_walkthrough_is_current(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = GENERATOR.main(["--check", name])
    assert code == 0, capsys.readouterr().out


def test_the_check_catches_a_drifted_walkthrough() -> None:
    shown = "$ dpone deliver x\ncompleted: 630 rows; frontier 1/1\n"
    assert GENERATOR.normalized(shown) != GENERATOR.normalized(shown.replace("630", "629"))
    assert GENERATOR.normalized("op_v1_" + "a" * 64 + " at 2026-12-01T17:07:26Z age 9s") == (
        GENERATOR.normalized("op_v1_" + "b" * 64 + " at 2026-12-02T01:00:00Z age 10s"))


def test_polls_that_found_a_job_still_running_are_not_compared() -> None:
    """On a loaded machine the first poll may already find the job complete."""
    quick = "  child 1/2 verifying_succeeded phase=complete job-0a0b0c0d-000001\n"
    slow = ("  child 1/2 waiting phase=running job-0a0b0c0d-000001\n"
            "  child 1/2 waiting phase=running job-0a0b0c0d-000001\n" + quick)
    assert GENERATOR.normalized(slow) == GENERATOR.normalized(quick)
    assert GENERATOR.normalized(quick) != GENERATOR.normalized(quick.replace("complete", "failed"))
