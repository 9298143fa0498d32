"""`dpone plan --all`: golden plans for a user's registry, written and checked.

On a registry that is not the examples: ``--out`` writes one pretty, sorted, stable plan per
workload and environment and rewrites only what changed; ``--check`` writes nothing, exits 0
when every golden is current and 1 naming each stale, missing or extra golden with its
semantic difference; misuse exits 2 with its code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dpone.plans import read_plan_file
from support.cli import Dpone, Run
from support.review import edit, independent_registry

NAMES = ("acme-dev/orders_async.json", "acme-dev/orders_sync.json")


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return independent_registry(tmp_path)


def _plan(registry: Path, *args: str) -> Run:
    return Dpone(registry, registry.parent / "state")("plan", "--all", "--registry",
                                                      str(registry), *args)


def test_out_writes_one_stable_pretty_plan_per_workload(registry: Path, tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"

    first = _plan(registry, "--out", str(goldens), "--format", "json")

    assert first.code == 0, first.err
    assert [p["state"] for p in first.json()["plans"]] == ["written", "written"]
    files = sorted(p.relative_to(goldens).as_posix() for p in goldens.rglob("*.json"))
    assert files == list(NAMES)
    text = (goldens / NAMES[1]).read_text("utf-8")
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True,
                              ensure_ascii=False) + "\n"
    _, digest = read_plan_file(goldens / NAMES[1])
    assert digest == first.json()["plans"][1]["digest"]
    before = {name: (goldens / name).stat().st_mtime_ns for name in NAMES}

    again = _plan(registry, "--out", str(goldens), "--format", "json")

    assert [p["state"] for p in again.json()["plans"]] == ["unchanged", "unchanged"]
    assert {name: (goldens / name).stat().st_mtime_ns for name in NAMES} == before


def test_check_passes_on_current_goldens_and_names_a_stale_one(registry: Path,
                                                                tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    assert _plan(registry, "--out", str(goldens)).code == 0
    current = _plan(registry, "--check", str(goldens))
    assert current.code == 0 and "every golden is current" in current.out
    written = {name: (goldens / name).read_bytes() for name in NAMES}

    edit(registry, "mappings/acme.orders.v1.yaml", "{name: note, type: string}",
         "{name: remark, type: string}")
    stale = _plan(registry, "--check", str(goldens))

    assert stale.code == 1
    assert 'mapping.columns[5].name  "note" -> "remark"' in stale.out
    assert "2 golden(s) differ from what the registry compiles to" in stale.out
    assert f"--out {goldens}" in stale.out
    assert {name: (goldens / name).read_bytes() for name in NAMES} == written  # nothing written
    document = _plan(registry, "--check", str(goldens), "--format", "json").json()
    assert document["stale"] == 2
    assert {p["state"] for p in document["plans"]} == {"stale"}
    assert {g["consequence"] for p in document["plans"] for g in p["diff"]["consequences"]} \
        == {"payload"}


def test_missing_and_extra_goldens_are_stale_and_out_removes_the_extra(
        registry: Path, tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    assert _plan(registry, "--out", str(goldens)).code == 0
    (goldens / NAMES[0]).unlink()
    os.replace(registry / "workloads" / "orders_sync.yaml",
               registry / "workloads" / "renamed.yaml")
    edit(registry, "workloads/renamed.yaml", "name: orders_sync", "name: orders_renamed")

    checked = _plan(registry, "--check", str(goldens), "--format", "json")

    assert checked.code == 1
    states = {p["name"]: (p["state"], p["diff"]["status"]) for p in checked.json()["plans"]}
    assert states == {"orders_async": ("missing", "added"),
                      "orders_renamed": ("missing", "added"),
                      "orders_sync": ("extra", "removed")}
    rewritten = _plan(registry, "--out", str(goldens))
    assert rewritten.code == 0
    [line] = [line for line in rewritten.out.splitlines() if "orders_sync.json" in line]
    assert line.endswith("EXTRA (removed: no workload compiles to it)")
    assert sorted(p.name for p in goldens.rglob("*.json")) == ["orders_async.json",
                                                             "orders_renamed.json"]


@pytest.mark.parametrize(("args", "message"), [
    ((), "--all needs one of --out DIR"),
    (("--out", "a", "--check", "b"), "--all needs one of --out DIR"),
    (("--out", "a", "--publish"), "name no WORKLOAD and no --publish"),
    (("--workloads", "nowhere", "--out", "a"), "no workload directory nowhere"),
], ids=["neither", "both", "publish", "no-workloads"])
def test_misuse_exits_2_with_a_hint(registry: Path, args: tuple[str, ...], message: str) -> None:
    run = _plan(registry, *args)
    assert run.code == 2
    assert message in run.err
    assert "hint:" in run.err


def test_check_without_all_and_two_workloads_of_one_name_are_refused(registry: Path,
                                                                     tmp_path: Path) -> None:
    dpone = Dpone(registry, tmp_path / "state")
    alone = dpone("plan", str(registry / "workloads" / "orders_sync.yaml"), "--registry",
                  str(registry), "--check", str(tmp_path))
    assert alone.code == 2 and "--check and --workloads go with --all" in alone.err
    (registry / "workloads" / "copy.yaml").write_bytes(
        (registry / "workloads" / "orders_sync.yaml").read_bytes())
    twice = _plan(registry, "--out", str(tmp_path / "goldens"))
    assert twice.code == 2
    assert "both compile to acme-dev/orders_sync.json" in twice.err
