"""What the reconcile CLI tests share: the receiver faults that leave an effect unknown, the
bare-duplicate profile edit, the command with the test's locators, and the journal's view of a
delivery's children."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from dpone.cli._inputs import close_quietly, open_existing_journal
from support.cli import Dpone, Run

DROP_SYNC: Final = {"match": {"method": "POST", "path_prefix": "/mock/v1/batches/"},
                    "fault": "commit_then_drop"}
DROP_ASYNC: Final = {"match": {"method": "POST", "path_prefix": "/mock/v1/dataset-jobs"},
                     "fault": "commit_then_drop"}


def bare_duplicate(registry: Path) -> None:
    """The receiver's duplicate answer holds nothing the profile reads (a bare 409): neither a
    job id nor a key to prove. (A job id alone is adopted under the example's certified,
    payload-bound fence: ``tests/unit/supervisor/test_duplicate_adoption.py``.)"""
    profile = registry / "profiles" / "mock.dataset-jobs@1.yaml"
    text = profile.read_text(encoding="utf-8")
    same_key = ("      id: {body_json_pointer: /job_id}\n"
                "      filename: {body_json_pointer: /filename}\n")
    assert same_key in text
    profile.write_text(text.replace(same_key, "      id: {body_json_pointer: /original_job}\n"),
                       encoding="utf-8")


def reconcile(dpone: Dpone, operation_id: str, *extra: str) -> Run:
    """``dpone delivery reconcile`` of ``operation_id`` on the test's journal and stores."""
    return dpone("delivery", "reconcile", "--operation-id", operation_id,
                 "--journal", dpone.journal_url, "--artifacts", str(dpone.state / "artifacts"),
                 "--plans", str(dpone.state), *extra)


def journal_state(dpone: Dpone, parent_id: str) -> dict[str, Any]:
    """Every child's stored tuple and journal revision."""
    journal = open_existing_journal(dpone.journal_url, environment_id="local-dev")
    try:
        parent = journal.load_parent(parent_id)
    finally:
        close_quietly(journal)
    return {c.operation_id: (c.state_name, c.revision) for c in parent.children}
