"""`scripts/demo` echoes each command it runs as it runs it, with every option.

The demo runs in a copy of its tree whose `.venv` holds stubs: `dpone` records its arguments
(and prints a parent id for `deliver`), and the test holds the receiver's port open, so nothing
is installed, served or delivered.
"""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from support.common import ROOT

PARENT = "op_v1_" + "a" * 64
_DPONE_STUB = f"""#!{sys.executable}
import json, sys, time
from pathlib import Path
with (Path(__file__).parent / "calls.jsonl").open("a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:2] == ["deliver"]:
    print("  parent {PARENT}")
if sys.argv[1:3] == ["receiver", "serve"]:
    time.sleep(60)  # the demo's exit trap stops it
"""


def _tree(root: Path) -> Path:
    """A copy of the demo with a no-op setup and stub executables."""
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "demo", root / "scripts" / "demo")
    (root / "scripts" / "setup").write_text("#!/usr/bin/env bash\n", encoding="utf-8")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "dpone").write_text(_DPONE_STUB, encoding="utf-8")
    (bin_dir / "python").write_text("#!/usr/bin/env bash\ncat >/dev/null\n", encoding="utf-8")
    for path in (root / "scripts" / "setup", bin_dir / "dpone", bin_dir / "python"):
        path.chmod(0o755)
    return bin_dir / "calls.jsonl"


def test_the_demo_echoes_the_inspect_command_it_runs(tmp_path: Path) -> None:
    calls = _tree(tmp_path / "tree")
    with socket.socket() as listener:  # the "receiver" the demo waits for
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        done = subprocess.run(
            ["bash", str(tmp_path / "tree" / "scripts" / "demo")], capture_output=True,
            text=True, timeout=60, check=False,
            env={"PATH": "/usr/bin:/bin", "DPONE_DEMO_PORT": str(port),
                 "TMPDIR": str(tmp_path)})

    assert done.returncode == 0, done.stdout + done.stderr
    inspects = [args for args in map(json.loads, calls.read_text().splitlines())
                if args[:2] == ["delivery", "inspect"]]
    echoed = [shlex.split(line[2:]) for line in done.stdout.splitlines()
              if line.startswith("$ dpone delivery inspect")]
    assert len(inspects) == 2
    assert echoed == [["dpone", *args] for args in inspects]
    assert all({"--journal", "--plans"} <= set(args) and PARENT in args for args in inspects)
