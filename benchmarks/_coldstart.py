"""Cold start of the dpone CLI: ``python -X importtime`` of ``dpone --help`` and the wall time
of ``dpone --help`` and ``dpone delivery inspect --help`` as fresh processes (median of N), each
also run without the console script's collector freeze (``cli()`` called as a test would, the
collector walking every imported object: :mod:`dpone.cli._process`), alternated in one run."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from _deliver_paths import DPONE, child_env

COMMANDS = {"dpone --help": ["--help"],
            "dpone delivery inspect --help": ["delivery", "inspect", "--help"]}
USUAL_COLLECTOR = " (collector as usual)"
UNFROZEN = [sys.executable, "-c", "from dpone.cli.main import cli; cli(prog_name='dpone')"]


@dataclass
class Import:
    module: str
    self_us: int
    cumulative_us: int


@dataclass
class ColdStart:
    top_imports: list[Import]
    total_import_us: int
    wall_s: dict[str, list[float]]

    def to_json(self) -> dict[str, Any]:
        return {"importtime_top": [vars(entry) for entry in self.top_imports],
                "importtime_total_us": self.total_import_us,
                "wall_s": {name: {"median": round(statistics.median(runs), 4),
                                  "runs": [round(run, 4) for run in runs]}
                           for name, runs in self.wall_s.items()}}


def importtime(top: int) -> tuple[list[Import], int]:
    """The ``top`` entries by cumulative import time of ``dpone --help`` (one cold process)."""
    argv = [DPONE[0], "-X", "importtime", *DPONE[1:], "--help"]
    result = subprocess.run(argv, capture_output=True, text=True, env=child_env("unused"),
                            check=True)
    entries = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cumulative_us, module = line[len("import time:"):].split("|", 2)
        entries.append(Import(module.rstrip(), int(self_us), int(cumulative_us)))
    total = sum(entry.self_us for entry in entries)
    return sorted(entries, key=lambda entry: -entry.cumulative_us)[:top], total


def cold_start(runs: int = 5, top: int = 10) -> ColdStart:
    imports, total = importtime(top)
    argvs = {name: [*entry, *args] for base, args in COMMANDS.items()
             for name, entry in ((base, DPONE), (base + USUAL_COLLECTOR, UNFROZEN))}
    wall: dict[str, list[float]] = {name: [] for name in argvs}
    for _ in range(runs):  # alternating, like the delivery runs
        for name, argv in argvs.items():
            start = time.perf_counter()
            subprocess.run(argv, capture_output=True, env=child_env("unused"), check=True)
            wall[name].append(time.perf_counter() - start)
    return ColdStart(imports, total, wall)


def render(result: ColdStart) -> list[str]:
    lines = [f"python -X importtime, dpone --help: {result.total_import_us / 1e6:.2f} s of "
             f"imports in all; top {len(result.top_imports)} by cumulative time (cumulative / "
             f"self ms; indentation = import depth):"]
    lines += [f"  {entry.cumulative_us / 1000:8.1f} {entry.self_us / 1000:8.1f}  {entry.module}"
              for entry in result.top_imports]
    for name, runs in result.wall_s.items():
        lines.append(f"{name}: {statistics.median(runs):.2f} s wall, median of {len(runs)} "
                     f"cold processes ({min(runs):.2f}..{max(runs):.2f})")
    for name in COMMANDS:
        frozen, usual = (statistics.median(result.wall_s[key])
                         for key in (name, name + USUAL_COLLECTOR))
        lines.append(f"{name}: {frozen / usual:.2f}x the same command with the collector as "
                     f"usual")
    return lines
