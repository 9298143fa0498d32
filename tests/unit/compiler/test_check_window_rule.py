"""`dpone check` states the planner's rule for the plan it compiled: window length and budget."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dpone.cli.main import cli
from support.cli_documents import published_document
from support.common import EXAMPLES


def _check(registry: Path, name: str, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["check", str(registry / "workloads" / f"{name}.yaml"),
                                      "--registry", str(registry), *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("preferred", [1, 2, 3, 4])
def test_check_prints_the_workload_preference_as_the_window_bound(registry: Path,
                                                                   preferred: int) -> None:
    workload = registry / "workloads" / "measurements_async.yaml"
    workload.write_text(workload.read_text("utf-8").replace(
        "preferred_window_days: 3", f"preferred_window_days: {preferred}"), "utf-8")

    lines = _check(registry, "measurements_async").splitlines()

    assert "  mutation     partition_replace by business_date (a day is never split)" in lines
    assert (f"  windows      up to {preferred} day(s) each (workload preferred_window_days; "
            "profile allows 1..4),") in lines
    assert ("               shorter only where a planning limit or the boundary end forces it"
            in lines)
    assert "  children     at most 10000 per boundary (limits.max_children)" in lines
    document = published_document(_check(registry, "measurements_async", "--format", "json"))
    assert document["mutation"] == {
        "kind": "partition_replace", "scope_field": "business_date", "window_days": preferred,
        "window_days_from": "workload", "window_days_range": [1, 4], "max_children": 10000}


def test_check_names_the_profile_default_and_the_append_split_rule() -> None:
    lines = _check(EXAMPLES, "measurements_sync").splitlines()

    assert ("  mutation     incremental_append by business_date (a day over the planning limits "
            "is split into row parts)") in lines
    assert ("  windows      up to 7 day(s) each (profile default preferred_window_days; "
            "profile allows 1..31),") in lines
