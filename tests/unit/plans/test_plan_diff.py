"""The semantic plan diff: a reviewer's change to a copy of the example registry lands in the
consequence class that says what it does, with the plan identities it moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.compiler import compile_workload
from dpone.contracts.plan import RestDeliveryPlan
from dpone.plans._diff import CONSEQUENCES, MEANING, RULES, consequence_of, diff_plans

WORKLOAD = "workloads/measurements_sync.yaml"


def _compiled(registry: Path) -> RestDeliveryPlan:
    return compile_workload(registry / WORKLOAD, registry).plan


def _edit(registry: Path, relative: str, old: str, new: str) -> None:
    path = registry / relative
    text = path.read_text("utf-8")
    assert old in text, f"{old!r} not in {relative}"
    path.write_text(text.replace(old, new, 1), "utf-8")


EDITS = {
    "a mapping column": (
        "mappings/mock.measurements.v1.yaml", "{name: note, type: string}",
        "{name: remark, type: string}", {"payload"}, {"mapping_digest"}),
    "a profile rate": (
        "profiles/mock.batch-ndjson@1.yaml", "submit_per_minute: 600", "submit_per_minute: 300",
        {"execution_policy"},
        {"profile.execution_policy_digest", "profile.profile_contract_digest"}),
    "a binding authority": (
        "bindings/mock_measurements.yaml", "authority: http://127.0.0.1:8765",
        "authority: http://127.0.0.1:8766", {"identity"},
        {"binding.receiver_binding_semantics_digest"}),
    "a workload description": (
        WORKLOAD, "description: Daily measurements,", "description: Daily sensor measurements,",
        {"descriptive"}, set()),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_reviewer_s_change_is_named_by_its_consequence(registry: Path, edit: str) -> None:
    relative, old, new, classes, identities = EDITS[edit]
    before = _compiled(registry)
    _edit(registry, relative, old, new)
    after = _compiled(registry)

    diff = diff_plans(before, after)

    assert diff.changed
    assert set(diff.by_consequence()) == classes
    assert set(diff.identities) == identities


def test_a_column_rename_shows_the_column_and_the_mapping_digest(registry: Path) -> None:
    before = _compiled(registry)
    _edit(registry, "mappings/mock.measurements.v1.yaml", "{name: note, type: string}",
          "{name: remark, type: string}")
    diff = diff_plans(before, _compiled(registry))
    renamed = [c for c in diff.changes if c.old == "note"]
    assert [(c.path, c.new, c.consequence) for c in renamed] == [
        ("mapping.columns[5].name", "remark", "payload")]


def test_the_same_plan_has_no_difference(registry: Path) -> None:
    plan = _compiled(registry)
    diff = diff_plans(plan, _compiled(registry))
    assert not diff.changed and diff.changes == () and diff.by_consequence() == {}


@pytest.mark.parametrize(("path", "consequence"), [
    ("profile.snapshot.request.method", "identity"),
    ("profile.snapshot.rate.submit_per_minute", "execution_policy"),
    ("profile.snapshot.limits.max_rows", "planning"),
    ("profile.snapshot.codec.gzip_level", "payload"),
    ("mapping.columns[0].name", "payload"),
    ("source_boundary.mutation_kind", "identity"),
    ("workload.sink.resource", "identity"),
    ("workload.sink.delivery_overrides.preferred_window_days", "planning"),
    ("profile.snapshot.timeouts_extra", "identity"),  # a prefix matches whole names only
    ("something.new", "identity"),  # unlisted fails closed
])
def test_paths_map_to_their_class_and_an_unlisted_one_is_identity(path: str,
                                                                   consequence: str) -> None:
    assert consequence_of(path) == consequence


def test_every_class_has_a_meaning_and_every_rule_a_class() -> None:
    assert set(MEANING) == set(CONSEQUENCES)
    assert {consequence for _prefix, consequence in RULES} <= set(CONSEQUENCES)
