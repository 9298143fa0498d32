"""The whole-run sentinel search finds a secret in a test's output and in a journal or artifact
file, and leaves alone the credential files tests write on purpose."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from support.delivery import TOKEN
from support.sentinel_sweep import Sweep, check_report, scan_tree
from support.vault import VAULT_TOKEN


def test_a_secret_in_captured_output_is_found() -> None:
    sweep = Sweep()
    check_report("t::ok", [("Captured stdout call", "delivered 3 children\n")], "", sweep)
    check_report("t::leak", [("Captured stderr call", f"Authorization: Bearer {TOKEN}\n")], "",
                 sweep)
    check_report("t::fail", [], f"AssertionError: {VAULT_TOKEN!r} != ''", sweep)
    assert [hit.split(": ", 1)[0] for hit in sweep.hits] == [
        "t::leak (Captured stderr call)", "t::fail (report)"]


def test_a_secret_in_a_journal_or_an_artifact_is_found_a_credential_file_is_not(
        tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "artifacts" / "evidence").mkdir(parents=True)
    journal = state / "journal.sqlite3"
    with sqlite3.connect(journal) as db:
        db.execute("CREATE TABLE receipt (document TEXT)")
        db.execute("INSERT INTO receipt VALUES (?)", (f'{{"echo": "{TOKEN}"}}',))
    (state / "artifacts" / "evidence" / "response.json").write_text(f'{{"k": "{VAULT_TOKEN}"}}')
    (state / "token").write_text(TOKEN + "\n")  # a file: credential source, on purpose
    (state / "basic").write_text(f"user:{TOKEN}")  # a bare user:password value, on purpose
    sweep = Sweep()
    try:
        scan_tree(state, "state", sweep)
    finally:  # the run's own sweep must not find these planted values afterwards
        for path in sorted(state.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
    assert sweep.files == 4
    assert sorted(hit.split(":")[0] for hit in sweep.hits) == [
        "state/artifacts/evidence/response.json", "state/journal.sqlite3"]


def test_a_worker_hands_over_its_search_and_a_silent_worker_fails_the_run() -> None:
    """Under pytest-xdist each worker searches its own reports, files and PostgreSQL clusters
    and hands the totals to the controller; a worker that handed nothing over is a hit."""
    worker = Sweep(reports=3, files=2, bytes=10)
    check_report("t::leak", [("Captured stdout call", f"token={TOKEN}\n")], "", worker)
    handed = worker.handover()
    controller = Sweep(reports=1)
    controller.merge("gw0", handed)
    assert (controller.reports, controller.files, controller.bytes) == (5, 2, 10)  # 1 + 3 + 1
    assert controller.hits == worker.hits and len(controller.hits) == 1
    controller.merge("gw1", None)
    assert controller.hits[-1] == "gw1: the worker ended without handing over its search"
    clean = Sweep()
    clean.merge("gw2", Sweep(reports=5).handover())
    assert clean.hits == [] and clean.reports == 5
