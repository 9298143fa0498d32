"""An environment's lease policy is runtime control-plane policy: read when a run starts,
never compiled into a plan (tuning it changes no plan digest)."""

from __future__ import annotations

import shutil
from pathlib import Path

from dpone.compiler import compile_workload
from dpone.compiler.environment import lease_policy
from dpone.contracts.binding import LeasePolicy
from support.common import EXAMPLES

ENVIRONMENT_FILE = Path("environments/local-dev.yaml")


def _registry(tmp_path: Path, leases: str) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(EXAMPLES, root)
    path = root / ENVIRONMENT_FILE
    text = path.read_text(encoding="utf-8")
    start = text.index("leases:")
    path.write_text(text[:start] + leases + "\n", encoding="utf-8")
    return root


def test_the_example_environment_declares_short_heartbeat_leases() -> None:
    policy = lease_policy(EXAMPLES, "local-dev")
    assert (policy.ttl_s, policy.heartbeat_s) == (60, 20)


def test_lease_policy_changes_no_plan_digest(tmp_path: Path) -> None:
    digests = set()
    for n, leases in enumerate(["leases: {ttl_s: 60, heartbeat_s: 20}",
                                "leases: {ttl_s: 5, heartbeat_s: 1}", ""]):
        root = _registry(tmp_path / str(n), leases)
        digests.add(compile_workload(root / "workloads/measurements_sync.yaml", root).digest)
        expected = {0: LeasePolicy(ttl_s=60, heartbeat_s=20),
                    1: LeasePolicy(ttl_s=5, heartbeat_s=1), 2: LeasePolicy()}[n]
        assert lease_policy(root, "local-dev") == expected
    assert len(digests) == 1


def test_a_registry_without_the_environment_file_runs_with_the_default(tmp_path: Path) -> None:
    assert lease_policy(tmp_path, "local-dev") == LeasePolicy()
    assert LeasePolicy().heartbeat_interval_s == 20.0
