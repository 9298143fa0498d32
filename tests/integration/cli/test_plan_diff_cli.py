"""`dpone plan diff` as a reviewer runs it, on a registry that is not the examples.

Each reviewer's change (a mapping column, a profile rate, a binding authority, a limit, a
description) is named by the class that says what it does, with exit 1; no change exits 0; an
error exits 2. The journal-aware and estimated forms are checked against a real delivery to the
mock receiver and a real `dpone seal`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import Dpone, Run
from support.review import TOKEN_ENV, edit, independent_registry

SYNC = "workloads/orders_sync.yaml"
ASYNC = "workloads/orders_async.yaml"
COLUMN = ("mappings/acme.orders.v1.yaml", "{name: note, type: string}",
          "{name: remark, type: string}")
RATE = ("profiles/acme.orders-ndjson@1.yaml", "submit_per_minute: 600", "submit_per_minute: 300")
AUTHORITY = ("bindings/acme_orders.yaml", "authority: http://127.0.0.1:8765",
             "authority: http://127.0.0.1:8766")
LIMIT = ("profiles/acme.orders-ndjson@1.yaml", "planning_rows: 1500", "planning_rows: 200")
WORDS = ("workloads/orders_sync.yaml", "description: Daily measurements,",
         "description: Daily sensor readings,")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=review@example", "-c", "user.name=review",
                    *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose HEAD holds the independent registry under ``registry/``."""
    independent_registry(tmp_path)
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "registry")
    return tmp_path


def _dpone(repo: Path) -> Dpone:
    return Dpone(registry=repo / "registry", state=repo / "state")


def _diff(repo: Path, *args: str) -> Run:
    return _dpone(repo)("plan", "diff", "--base", "HEAD", "--registry", str(repo / "registry"),
                        *args)


def _classes(document: dict[str, object], name: str) -> set[str]:
    [plan] = [p for p in document["plans"] if p["name"] == name]  # type: ignore[attr-defined]
    return {group["consequence"] for group in plan["consequences"]}


@pytest.mark.parametrize(("edits", "expected"), [
    ((COLUMN,), {"orders_sync": {"payload"}, "orders_async": {"payload"}}),
    ((RATE,), {"orders_sync": {"execution_policy"}, "orders_async": set()}),
    ((AUTHORITY,), {"orders_sync": {"identity"}, "orders_async": {"identity"}}),
    ((LIMIT,), {"orders_sync": {"planning"}, "orders_async": set()}),
    ((WORDS,), {"orders_sync": {"descriptive"}, "orders_async": set()}),
    ((COLUMN, RATE, AUTHORITY), {"orders_sync": {"identity", "payload", "execution_policy"},
                                 "orders_async": {"identity", "payload"}}),
], ids=["column", "rate", "authority", "limit", "description", "all-three"])
def test_each_change_is_named_by_its_consequence_with_exit_1(
        repo: Path, edits: tuple[tuple[str, str, str], ...],
        expected: dict[str, set[str]]) -> None:
    for relative, old, new in edits:
        edit(repo / "registry", relative, old, new)

    run = _diff(repo, "--format", "json")

    assert run.code == 1, run.err
    document = run.json()
    assert document["changed"] is True
    assert {name: _classes(document, name) for name in expected} == expected
    by_name = {p["name"]: p for p in document["plans"]}
    assert by_name["orders_sync"]["old"]["source"] == "HEAD:registry/workloads/orders_sync.yaml"
    rate_only = expected["orders_sync"] <= {"execution_policy", "descriptive"}
    assert by_name["orders_sync"]["new_intent"] is not rate_only


def test_the_column_rename_names_the_column_and_the_mapping_digest(repo: Path) -> None:
    edit(repo / "registry", *COLUMN)

    run = _diff(repo, str(repo / "registry" / SYNC))

    assert run.code == 1
    assert 'mapping.columns[5].name  "note" -> "remark"' in run.out
    assert "mapping_digest" in run.out
    assert "next run: a new delivery intent for every window" in run.out
    assert run.out.rstrip().endswith("1 of 1 plan(s) changed (plans with a change of each "
                                     "class: payload 1)")


def test_no_change_exits_0_in_every_format(repo: Path) -> None:
    for fmt in ("text", "json", "markdown"):
        run = _diff(repo, "--format", fmt)
        assert run.code == 0, (fmt, run.err)
    assert _diff(repo, "--format", "json").json()["changed"] is False
    assert "0 of 2 plan(s) changed" in _diff(repo).out


def test_markdown_is_a_pull_request_comment(repo: Path) -> None:
    edit(repo / "registry", *RATE)

    run = _diff(repo, "--format", "markdown")

    assert run.code == 1
    assert run.out.startswith("### dpone plan diff: 1 of 2 plan(s) changed")
    assert "| `orders_sync` | acme-dev | changed | execution_policy |" in run.out
    assert "| `orders_async` | acme-dev | unchanged | - |" in run.out
    assert "| `profile.snapshot.rate.submit_per_minute` | `600` | `300` |" in run.out
    assert "new delivery intent" not in run.out


def test_two_plan_files_compare_like_the_registry(repo: Path) -> None:
    dpone = _dpone(repo)
    registry = repo / "registry"
    assert dpone("plan", "--all", "--registry", str(registry), "--out",
                 str(repo / "goldens")).code == 0
    edit(registry, *AUTHORITY)
    written = dpone("plan", str(registry / SYNC), "--registry", str(registry), "--out",
                    str(repo / "store"), "--format", "json").json()
    golden = str(repo / "goldens" / "acme-dev" / "orders_sync.json")

    by_file = dpone("plan", "diff", golden, written["path"], "--format", "json")
    by_digest = dpone("plan", "diff", golden, written["plan_digest"], "--plans",
                      str(repo / "store"), "--format", "json")
    by_workload = dpone("plan", "diff", golden, str(registry / SYNC), "--registry",
                        str(registry), "--format", "json")

    assert by_file.code == by_digest.code == by_workload.code == 1
    for run in (by_file, by_digest, by_workload):
        [plan] = run.json()["plans"]
        assert plan["new"]["digest"] == written["plan_digest"]
        assert [g["consequence"] for g in plan["consequences"]] == ["identity"]
    assert dpone("plan", "diff", golden, golden).code == 0


def test_a_workload_added_since_the_base_is_named_added(repo: Path) -> None:
    registry = repo / "registry"
    shutil.copy(registry / SYNC, registry / "workloads" / "orders_sync_eu.yaml")
    edit(registry, "workloads/orders_sync_eu.yaml", "name: orders_sync", "name: orders_sync_eu")

    document = _diff(repo, "--format", "json").json()

    assert {p["name"]: p["status"] for p in document["plans"]} == {
        "orders_async": "unchanged", "orders_sync": "unchanged", "orders_sync_eu": "added"}


@pytest.mark.parametrize(("args", "code"), [
    (("plan", "diff", "only-one.json"), "input.invalid_argument"),
    (("plan", "diff", "missing-a.json", "missing-b.json"), "input.not_found"),
    (("plan", "diff", "--base", "no-such-ref", "--registry", "{registry}"),
     "input.invalid_argument"),
    (("plan", "diff", "--base", "HEAD"), "input.invalid_argument"),
    (("plan", "diff", "{registry}/workloads/orders_sync.yaml", "{registry}/workloads/"
      "orders_async.yaml"), "input.invalid_argument"),
], ids=["one-plan", "no-such-file", "unknown-ref", "base-without-registry",
        "workload-without-registry"])
def test_an_error_exits_2_with_its_code(repo: Path, args: tuple[str, ...], code: str) -> None:
    registry = str(repo / "registry")
    run = _dpone(repo)(*(a.replace("{registry}", registry) for a in args), "--format", "json")
    assert run.code == 2
    assert run.json()["code"] == code


def test_base_outside_a_git_repository_exits_2(tmp_path: Path) -> None:
    registry = independent_registry(tmp_path)
    run = Dpone(registry, tmp_path / "state")("plan", "diff", "--base", "HEAD", "--registry",
                                              str(registry))
    assert run.code == 2
    assert "input.invalid_argument: --base needs a git repository" in run.err


def test_the_journal_names_the_deliveries_a_new_intent_concerns(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = repo / "registry"
    monkeypatch.setenv(TOKEN_ENV, "tok-review-journal")
    dpone = _dpone(repo)
    with ReceiverThread(ReceiverConfig(token="tok-review-journal")) as receiver:
        edit(registry, AUTHORITY[0], "authority: http://127.0.0.1:8765",
             f"authority: {receiver.base_url}")
        _git(repo, "commit", "-q", "-am", "the receiver of this test")
        delivered = dpone.deliver("orders_sync", ("2026-08-01", "2026-08-08"), "--format",
                                  "json")
    assert delivered.code == 0, delivered.err
    parent = delivered.json()["parent_id"]
    edit(registry, *COLUMN)
    edit(registry, *RATE)

    run = _diff(repo, str(registry / SYNC), "--journal", dpone.journal_url, "--format", "json")

    assert run.code == 1
    [plan] = run.json()["plans"]
    [delivery] = plan["journal"]["deliveries"]
    assert (delivery["parent_id"], delivery["status"], delivery["under_old_plan"],
            delivery["effect"]) == (parent, "completed", True, "applied_new_intent_on_rerun")
    assert delivery["boundary"] == {"from": "2026-08-01", "to": "2026-08-08"}
    text = _diff(repo, str(registry / SYNC), "--journal", dpone.journal_url).out
    assert f"{parent}  [2026-08-01, 2026-08-08)  completed: applied" in text


def test_a_rate_change_reads_no_journal(repo: Path) -> None:
    edit(repo / "registry", *RATE)
    run = _diff(repo, str(repo / "registry" / SYNC), "--journal",
                str(repo / "no-such-journal.sqlite3"), "--format", "json")
    assert run.code == 1
    [plan] = run.json()["plans"]
    assert "journal" not in plan and plan["new_intent"] is False


def test_the_estimate_counts_the_children_dpone_seal_cuts(repo: Path) -> None:
    registry = repo / "registry"
    dpone = _dpone(repo)
    interval = ("--interval-start", "2026-08-01", "--interval-end", "2026-08-15")
    before = dpone("seal", str(registry / SYNC), "--registry", str(registry), *interval,
                   "--artifacts", str(repo / "a1"), "--plans", str(repo / "p1"),
                   "--format", "json").json()
    edit(registry, *LIMIT)
    after = dpone("seal", str(registry / SYNC), "--registry", str(registry), *interval,
                  "--artifacts", str(repo / "a2"), "--plans", str(repo / "p2"),
                  "--format", "json").json()

    run = _diff(repo, str(registry / SYNC), *interval, "--format", "json")

    [plan] = run.json()["plans"]
    assert plan["children"] == {"interval": {"from": "2026-08-01", "to": "2026-08-15"},
                                "rows": before["rows"], "before": before["child_count"],
                                "after": after["child_count"]}
    assert after["child_count"] > before["child_count"]
    assert json.loads(json.dumps(plan["consequences"]))[0]["consequence"] == "planning"
