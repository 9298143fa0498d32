"""One reviewed golden per ``--format json`` document kind (and per delivery result status),
written from real CLI runs against the mock receiver: ``goldens/cli/<schema id>[-<status>].json``.

Volatile values are normalized before comparison: every 64-hex digest or id becomes
``<hexN>`` numbered in order of first appearance (so equal values stay visibly equal), instants
become ``<timestamp>``, ages ``<age>`` (and the values of the journal metrics that are times
since a journal timestamp), the receiver's port ``<port>``, its job run prefix
``<run>``, a run's lease holder (host and process) ``<holder>``, and the temporary and
repository directories ``<tmp>`` and ``<repo>``. Update with ``pytest
tests/integration/cli/test_cli_document_goldens.py --snapshot-update`` and review the diff.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from dpone.contracts.documents import DOCUMENTS, DeliveryResultDocument
from dpone.receiver import ReceiverThread
from support.cli import ONE_ASYNC_CHILD, TOKEN, TOKEN_ENV, Dpone, Run, bind_registry
from support.common import ROOT, free_port

WEEK = ("2026-08-01", "2026-08-08")
KINDS = ("dpone.check_result.v1", "dpone.plan_result.v1", "dpone.seal_result.v1",
         "dpone.delivery_result.v1-completed", "dpone.delivery_result.v1-pending",
         "dpone.delivery_result.v1-blocked", "dpone.delivery_result.v1-stopped",
         "dpone.delivery_result.v1-empty", "dpone.delivery_inspection.v1",
         "dpone.delivery_resume_preview.v1", "dpone.delivery_list.v1",
         "dpone.delivery_reconcile_result.v1", "dpone.error.v1", "dpone.mutation_gate.v1",
         "dpone.revocation_list.v1", "dpone.payload_prune.v1", "dpone.audit_export.v1",
         "dpone.journal_metrics.v1", "dpone.plan_set.v1", "dpone.plan_diff.v1",
         "dpone.request_preview.v1")
_AGES = frozenset({"age_s", "receipt_age_s"})
_AGE_SERIES = frozenset({"dpone_journal_unknown_effect_oldest_age_seconds",
                         "dpone_journal_receipt_oldest_age_seconds",
                         "dpone_journal_checkpoint_lag_oldest_seconds",
                         "dpone_journal_source_lag_seconds"})
_VOLATILE = re.compile(r"(?P<hex>[0-9a-f]{64})"
                       r"|(?P<instant>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?)"
                       r"|(?P<port>(?<=127\.0\.0\.1:)\d+)"
                       r"|(?P<run>(?<=job-)[0-9a-f]{8}(?=-))"
                       r"|(?P<holder>(?<=^dpone-cli:)[^:]+:\d+$)")


class CliGolden(SingleFileSnapshotExtension):
    """One pretty-printed JSON file per document kind under goldens/cli."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(ROOT / "goldens" / "cli")

    @classmethod
    def get_snapshot_name(cls, *, test_location: Any, index: Any = 0) -> str:
        return str(test_location.testname).split("[", 1)[1].rstrip("]")


class _Normalizer:
    def __init__(self, tmp: Path) -> None:
        self._tmp = str(tmp)
        self._hexes: dict[str, str] = {}

    def _text(self, value: str) -> str:
        value = value.replace(self._tmp, "<tmp>").replace(str(ROOT), "<repo>")

        def placeholder(match: re.Match[str]) -> str:
            if match.group("hex"):
                return self._hexes.setdefault(match.group(), f"<hex{len(self._hexes) + 1}>")
            return f"<{match.lastgroup}>" if match.lastgroup != "instant" else "<timestamp>"

        return _VOLATILE.sub(placeholder, value)

    def __call__(self, node: Any, key: str | None = None) -> Any:
        if isinstance(node, dict) and node.get("name") in _AGE_SERIES and "value" in node:
            node = {**node, "value": "<age>"}  # a time since a journal timestamp
        if isinstance(node, dict):
            return {k: self(node[k], k) for k in sorted(node)}
        if isinstance(node, list):
            return [self(item) for item in node]
        if key in _AGES and isinstance(node, int):
            return "<age>"
        return self._text(node) if isinstance(node, str) else node


def _document(run: Run, code: int = 0) -> dict[str, Any]:
    assert run.code == code, run.out + run.err
    return run.json()


def _runs(dpone: Dpone, receiver: ReceiverThread, root: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, dict[str, Any]]]:
    registry = str(dpone.registry)
    sync = str(dpone.registry / "workloads" / "measurements_sync.yaml")
    yield "dpone.check_result.v1", _document(dpone("check", sync, "--registry", registry,
                                                   "--format", "json"))
    yield "dpone.plan_result.v1", _document(dpone("plan", sync, "--registry", registry, "--out",
                                                  str(root / "plans"), "--format", "json"))
    yield "dpone.plan_set.v1", _document(dpone(
        "plan", "--all", "--registry", registry, "--out", str(root / "goldens"), "--format",
        "json"))
    # The example's reviewed golden against the same workload bound to this test's receiver.
    yield "dpone.plan_diff.v1", _document(dpone(
        "plan", "diff", str(ROOT / "goldens" / "plans" / "local-dev" / "measurements_sync.json"),
        sync, "--registry", registry, "--format", "json"), 1)
    yield "dpone.request_preview.v1", _document(dpone(
        "preview", sync, "--registry", registry, "--interval-start", WEEK[0], "--interval-end",
        WEEK[1], "--sample", "1", "--format", "json"))
    yield "dpone.seal_result.v1", _document(dpone(
        "seal", sync, "--registry", registry, "--interval-start", WEEK[0], "--interval-end",
        WEEK[1], "--artifacts", str(root / "sealed"), "--format", "json"))
    yield "dpone.delivery_result.v1-completed", _document(
        dpone.deliver("measurements_sync", WEEK, "--format", "json"))
    yield "dpone.delivery_result.v1-empty", _document(
        dpone.deliver("measurements_sync", ("2026-10-01", "2026-10-08"), "--format", "json"))
    pending = _document(dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json"))
    yield "dpone.delivery_result.v1-pending", pending
    parent_id = str(pending["parent_id"])
    yield "dpone.delivery_resume_preview.v1", _document(dpone.resume(parent_id, "--format",
                                                                     "json"))
    _document(dpone.resume(parent_id, "--apply", "--wait", "--actor", "ops@example", "--format",
                             "json"))
    yield "dpone.delivery_inspection.v1", _document(dpone.inspect(parent_id, "--format", "json"))
    # Stopped after admission: a binding whose receiver never answers (nothing reached it).
    closed = Dpone(bind_registry(root / "closed", f"http://127.0.0.1:{free_port()}"),
                   dpone.state)
    yield "dpone.delivery_result.v1-stopped", _document(
        closed.deliver("measurements_sync", ("2026-08-08", "2026-08-15"), "--format", "json"), 3)
    receiver.state.faults.install([{"match": {"method": "POST",
                                              "path_prefix": "/mock/v1/batches/"},
                                    "fault": "commit_then_drop"}])
    blocked = _document(
        dpone.deliver("measurements_sync", ("2026-08-15", "2026-08-22"), "--format", "json"), 4)
    yield "dpone.delivery_result.v1-blocked", blocked
    yield "dpone.delivery_list.v1", _document(dpone("delivery", "list", "--journal",
                                                    dpone.journal_url, "--format", "json"))
    unknown = str(blocked["blocked"]["operation_id"])
    evidence = root / "evidence.json"
    evidence.write_text(json.dumps({
        "schema": "dpone.operator_evidence.v1", "effect": "applied",
        "accepted_rows": next(c["rows"] for c in blocked["children"]
                              if c["operation_id"] == unknown),
        "rejected_rows": 0, "receiver_reference": "console batch", "attested_by": "ops"}),
        "utf-8")
    yield "dpone.delivery_reconcile_result.v1", _document(dpone(
        "delivery", "reconcile", "--operation-id", unknown, "--journal", dpone.journal_url,
        "--artifacts", str(dpone.state / "artifacts"), "--plans", str(dpone.state),
        "--evidence", str(evidence), "--format", "json"))
    misspelt = root / "misspelt.yaml"
    shutil.copy(sync, misspelt)
    misspelt.write_text(Path(sync).read_text("utf-8").replace("description:", "descripton:"),
                        "utf-8")
    yield "dpone.error.v1", _document(dpone("check", str(misspelt), "--registry", registry,
                                            "--format", "json"), 2)
    yield "dpone.mutation_gate.v1", _document(dpone(
        "admin", "gate", "block", "--journal", dpone.journal_url, "--reason",
        "journal restored from backup", "--actor", "ops-oncall", "--format", "json"))
    yield "dpone.revocation_list.v1", _document(dpone(
        "admin", "revoke", "--profile", "mock.batch-ndjson@1", "--journal", dpone.journal_url,
        "--reason", "vendor advisory VA-2026-17", "--actor", "sec-oncall", "--format", "json"))
    yield "dpone.payload_prune.v1", _document(dpone(
        "admin", "prune", "--journal", dpone.journal_url, "--artifacts",
        str(dpone.state / "artifacts"), "--format", "json"))
    yield "dpone.audit_export.v1", _document(dpone(
        "admin", "audit", "--journal", dpone.journal_url, "--limit", "3", "--format", "json"))
    yield "dpone.journal_metrics.v1", _document(dpone(
        "metrics", "show", "--journal", dpone.journal_url, "--format", "json"))


@pytest.fixture(scope="module")
def documents(_module_receiver: ReceiverThread,
              tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every document kind from one sequence of real runs, normalized."""
    root = tmp_path_factory.mktemp("cli-goldens")
    _module_receiver.state.reset()
    dpone = Dpone(bind_registry(root, _module_receiver.base_url), root / "state")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv(TOKEN_ENV, TOKEN)
        found = dict(_runs(dpone, _module_receiver, root, monkeypatch))
    return {kind: _Normalizer(root)(document) for kind, document in found.items()}


@pytest.fixture
def golden(snapshot: Any) -> Any:
    return snapshot.use_extension(CliGolden)


def test_every_document_kind_has_a_golden(documents: dict[str, Any]) -> None:
    union, _discriminator = get_args(DeliveryResultDocument)
    statuses = {model.model_fields["status"].default for model in get_args(union)}
    assert sorted(documents) == sorted(KINDS)
    assert {kind.split("-")[0] for kind in KINDS} == set(DOCUMENTS)
    assert {kind.split("-")[1] for kind in KINDS if "-" in kind} == statuses


@pytest.mark.parametrize("kind", KINDS)
def test_document_matches_golden(kind: str, documents: dict[str, Any], golden: Any) -> None:
    text = json.dumps(documents[kind], indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert text == golden
