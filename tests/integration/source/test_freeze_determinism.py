"""The same inputs frozen in two separate processes publish byte-identical artifacts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from dpone.executor.source import open_parent
from support.common import EXAMPLES, ROOT

SCRIPT = """
import datetime as dt, json, sys
from pathlib import Path
from dpone.executor.source import freeze_source
from support.source import MemoryArtifactStore, example_plan

out = Path(sys.argv[1])
store = MemoryArtifactStore()
parent = freeze_source(example_plan(), registry_root=Path(sys.argv[2]),
                       interval_start=dt.date(2026, 8, 1), interval_end=dt.date(2026, 8, 8),
                       artifacts=store)
for key, data in store.objects.items():
    target = out / key
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
print(json.dumps({"digest": parent.artifact.digest, "rows": parent.row_count}))
"""


def _run(out: Path, seed: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONHASHSEED": seed,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(out), str(EXAMPLES)], env=env,
                          capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_processes_write_identical_parent_bytes(tmp_path: Path) -> None:
    first = _run(tmp_path / "a", "1")
    second = _run(tmp_path / "b", "4242")
    assert first == second
    files_a, files_b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert files_a == files_b
    assert sorted(Path(name).suffix for name in files_a) == [".arrow", ".json"]
    arrow = next(data for name, data in files_a.items() if name.endswith(".arrow"))
    assert open_parent(arrow).read_all().num_rows == first["rows"]
