"""The example plans' goldens under goldens/plans/ are what `dpone plan --all` writes.

They are refreshed with the product's own command (``dpone plan --all --registry examples --out
goldens/plans``), never by a test: this suite runs its ``--check`` and fails on a stale golden
with the semantic difference in the message."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from dpone.cli.main import cli
from dpone.compiler import compile_workload
from dpone.plans import read_plan_file
from support.common import EXAMPLES, GOLDEN_PLANS

EXAMPLE_WORKLOADS = ("measurements_async", "measurements_sync")


def test_the_example_goldens_are_current() -> None:
    result = CliRunner().invoke(cli, ["plan", "--all", "--registry", str(EXAMPLES), "--check",
                                      str(GOLDEN_PLANS)])
    refresh = "dpone plan --all --registry examples --out goldens/plans"
    assert result.exit_code == 0, f"{result.stdout}\nrefresh with `{refresh}` and review"
    listed = json.loads(CliRunner().invoke(cli, [
        "plan", "--all", "--registry", str(EXAMPLES), "--check", str(GOLDEN_PLANS),
        "--format", "json"]).stdout)
    assert [(p["environment"], p["name"], p["state"]) for p in listed["plans"]] == [
        ("local-dev", name, "unchanged") for name in EXAMPLE_WORKLOADS]


@pytest.mark.parametrize("name", EXAMPLE_WORKLOADS)
def test_golden_digest_equals_compiled_digest(name: str) -> None:
    _, digest = read_plan_file(GOLDEN_PLANS / "local-dev" / f"{name}.json")
    assert digest == compile_workload(EXAMPLES / "workloads" / f"{name}.yaml", EXAMPLES).digest
