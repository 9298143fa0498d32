"""Ctrl-C (SIGINT) during `dpone deliver --wait`, at every cut point a sync run passes: the
process exits 130 (never click's "Aborted!" and exit 1, never a traceback); once the delivery is
admitted it prints its summary and the `next:` resume command first; the journal stays
consistent: `delivery resume --apply` then ends with a defined outcome (completed, or an unknown
effect for a request that may have left) and the receiver never applied a batch twice."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from dpone.receiver import ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, Dpone, bind_registry

WEEK = ("2026-08-01", "2026-08-08")
_PASSAGE = re.compile(r"^dpone: test cut passage (before|after):(\S+)@1$", re.M)


def _registry(receiver: ReceiverThread, root: Path) -> Path:
    """The example registry bound to ``receiver``, with leases of 4 s: a lease the interrupted
    run could not release (taken a moment before the interrupt) frees within that."""
    registry = bind_registry(root, receiver.base_url)
    environment = registry / "environments" / "local-dev.yaml"
    environment.write_text(re.sub(r"^leases: .*$", "leases: {ttl_s: 4, heartbeat_s: 1}",
                                  environment.read_text(encoding="utf-8"), flags=re.M),
                           encoding="utf-8")
    return registry


def _deliver(registry: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from dpone.cli.main import main; main()", "deliver",
         str(registry / "workloads" / "measurements_sync.yaml"), "--registry", str(registry),
         "--interval-start", WEEK[0], "--interval-end", WEEK[1], "--wait"],
        cwd=cwd, env={**os.environ, TOKEN_ENV: TOKEN, "NO_COLOR": "1", **env},
        capture_output=True, text=True, timeout=120, check=False)


def _points(receiver: ReceiverThread, root: Path) -> list[str]:
    registry = _registry(receiver, root / "trace")
    traced = _deliver(registry, root, DPONE_TEST_CUT="trace")
    assert traced.returncode == 0, traced.stdout + traced.stderr
    return list(dict.fromkeys(f"{w}:{p}" for w, p in _PASSAGE.findall(traced.stderr)))


def test_ctrl_c_at_every_cut_point_exits_130_with_the_summary_and_a_consistent_journal(
        receiver: ReceiverThread, tmp_path: Path) -> None:
    points = _points(receiver, tmp_path)
    assert {"after:admission", "before:send", "after:send", "after:frontier"} <= set(points)
    for point in points:
        receiver.state.reset()
        root = tmp_path / point.replace(":", "-").replace(".", "-")
        registry = _registry(receiver, root)

        run = _deliver(registry, root, DPONE_TEST_CUT=point, DPONE_TEST_CUT_SIGNAL="INT")

        shown = f"{point}:\n{run.stdout}{run.stderr}"
        assert run.returncode == 130, shown
        assert "Aborted!" not in shown and "Traceback" not in shown
        if run.stdout:  # admitted: the summary and the command that continues
            assert "run.interrupted" in run.stdout, shown
            assert re.search(r"next: dpone delivery resume --operation-id op_v1_\S+ .*--apply",
                             run.stdout), shown
        else:  # before admission: one line, nothing to resume
            assert "interrupted (Ctrl-C)" in run.stderr, shown
        resumed = Dpone(registry, registry / ".dpone")(*_again(registry, run))
        assert resumed.code in (0, 4), f"{shown}\nresume: {resumed.out}{resumed.err}"
        assert receiver.state.ledger.snapshot()["duplicate_mutations"] == 0, shown


def _again(registry: Path, run: subprocess.CompletedProcess[str]) -> list[str]:
    """Resume the admitted delivery the interrupted run names, or deliver again."""
    found = re.search(r"^  parent (op_v1_[0-9a-f]{64})$", run.stdout, re.M)
    if found is None:
        return ["deliver", str(registry / "workloads" / "measurements_sync.yaml"), "--registry",
                str(registry), "--interval-start", WEEK[0], "--interval-end", WEEK[1], "--wait"]
    return ["delivery", "resume", "--operation-id", found.group(1), "--environment",
            "local-dev", "--registry", str(registry), "--apply", "--wait"]

