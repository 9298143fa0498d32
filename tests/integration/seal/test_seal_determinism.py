"""Sealing the same inputs in two separate processes gives identical bytes and digests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.common import ROOT
from support.seal import EXAMPLE_NAMES, Sealed, seal_example

SCRIPT = """
import json, sys
from pathlib import Path
from support.seal import seal_example

sealed = seal_example(sys.argv[1], Path(sys.argv[2]))
topology = sealed.topology
print(json.dumps({
    "parent": topology.parent_digest,
    "parent_plan_digest": topology.parent_plan_digest,
    "payloads": [c.payload.digest for c in topology.children],
    "documents": [c.document.digest for c in topology.children],
}))
"""


def _run(name: str, out: Path, seed: str) -> dict[str, object]:
    paths = [str(Path(__file__).parent), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, name, str(out)], env=env,
                          capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_two_processes_seal_identical_topologies(name: str, tmp_path: Path) -> None:
    first = _run(name, tmp_path / "a", "1")
    second = _run(name, tmp_path / "b", "4242")
    assert first == second
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_sealing_again_into_the_same_store_is_a_no_op(
        name: str, sealed_examples: dict[str, Sealed]) -> None:
    before = sealed_examples[name]
    again = seal_example(name, before.store.root)
    assert again.topology == before.topology
