"""Where the CPU of an in-process delivery goes: this process, the receiver, the journal server.

The drive stage of a synchronous delivery runs on a machine the receiver (and a PostgreSQL
journal's server) share with it, so its wall time is bounded by the CPU all of them spend.
:class:`CpuWatch` reads, around one ``deliver()``, this process's user and system seconds
(``getrusage``) and the CPU seconds of the other processes named by their root pid (the root and
its direct children, from ``/proc``: Linux only, None elsewhere); the same around the bare
and checked uploads. :func:`render` prints the medians against the wall time and the machine's
cores (when the sum nears the cores times the wall, the stage is CPU-bound and only spending
less CPU per child makes it faster), the CPU floor of each delivery (all of its CPU over all
the cores: no schedule of the same work finishes sooner on this machine) against the bare
upload, this process's CPU per child on each path, and how the
delivery's splits over its ports: the CPU time (``time.thread_time``) of the calling thread in
each journal, artifact and transport call, the rest being the supervisor's own; and this
process's context switches per child on each path (``getrusage``: voluntary ones are a thread
that blocked: a round trip, an fsync, the interpreter lock; involuntary ones are the scheduler
taking the core back).
"""

from __future__ import annotations

import os
import resource
import statistics
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

PidSource = Callable[[], int | None]
"""The root pid of a watched process tree, read when a watch starts (None: not watched)."""

_PROC = Path("/proc")


def _ticks(stat: str) -> tuple[int, int]:
    """``(ppid, utime + stime)`` of one ``/proc/<pid>/stat`` line."""
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[11]) + int(fields[12])


def tree_cpu_s(root: int) -> float | None:
    """CPU seconds spent so far by ``root`` and its direct children (None without ``/proc``)."""
    if not (_PROC / str(root) / "stat").exists():
        return None
    ticks = 0
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid, spent = _ticks((entry / "stat").read_text())
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile, or not a process entry
        if int(entry.name) == root or ppid == root:
            ticks += spent
    return ticks / os.sysconf("SC_CLK_TCK")


class CpuWatch:
    """CPU seconds of this process and of the ``others`` (name -> root pid) from its creation
    to each :meth:`spent`."""

    def __init__(self, others: Mapping[str, PidSource]) -> None:
        self._roots = {name: source() for name, source in others.items()}
        self._start = {name: None if pid is None else tree_cpu_s(pid)
                       for name, pid in self._roots.items()}
        self._self = resource.getrusage(resource.RUSAGE_SELF)

    def spent(self) -> dict[str, float]:
        """``cpu.user`` and ``cpu.sys`` of this process, ``cpu.<name>`` of each watched tree."""
        now = resource.getrusage(resource.RUSAGE_SELF)
        spent = {"cpu.user": now.ru_utime - self._self.ru_utime,
                 "cpu.sys": now.ru_stime - self._self.ru_stime,
                 "switches.voluntary": float(now.ru_nvcsw - self._self.ru_nvcsw),
                 "switches.involuntary": float(now.ru_nivcsw - self._self.ru_nivcsw)}
        for name, pid in self._roots.items():
            before = self._start.get(name)
            after = None if pid is None else tree_cpu_s(pid)
            if before is not None and after is not None:
                spent[f"cpu.{name}"] = after - before
        return spent


def _medians(repeats: list[tuple[float, dict[str, float]]]) -> tuple[float, dict[str, float]]:
    names = sorted({key for _, spent in repeats for key in spent if key.startswith("cpu.")})
    return (statistics.median(seconds for seconds, _ in repeats),
            {key.removeprefix("cpu."): statistics.median(spent.get(key, 0.0)
                                                         for _, spent in repeats)
             for key in names})


def _line(label: str, wall: float, median: dict[str, float], cores: int) -> str:
    total = sum(median.values())
    others = "".join(f", {name.replace('_', ' ')} {value:.2f} s" for name, value in
                     median.items() if name not in ("user", "sys"))
    return (f"  {label}: this process {median['user'] + median['sys']:.2f} s (user "
            f"{median['user']:.2f}, system {median['sys']:.2f}){others}: {total:.2f} s of CPU in "
            f"{wall:.2f} s = {total / wall:.2f} of {cores} cores busy")


LABELS = {"in-process": "deliver() in process", "no-wire": "deliver() with no wire",
          "bare": "bare upload", "checked": "checked upload"}
"""The paths whose CPU is watched, in the order shown."""


def render(runs: dict[str, list[tuple[float, dict[str, float]]]],
           children: int) -> tuple[list[str], dict[str, Any]]:
    """The CPU lines of the watched paths (``runs``: each repeat's wall seconds and spent, by
    path), medians of each part, this process's CPU per child of each, and the in-process
    delivery's CPU per child by port."""
    measured = {path: _medians(repeats) for path, repeats in runs.items()
                if repeats and "cpu.user" in repeats[0][1]}
    if "in-process" not in measured:
        return [], {}
    cores = os.cpu_count() or 1
    lines = ["CPU while it ran (median; a stage whose CPU nears the cores times its wall time is "
             "CPU-bound)"]
    document: dict[str, Any] = {"cores": cores}
    per_child: dict[str, float] = {}
    for path, label in LABELS.items():
        if path not in measured:
            continue
        wall, median = measured[path]
        lines.append(_line(label, wall, median, cores))
        per_child[path] = (median["user"] + median["sys"]) / children * 1000
        document[path.replace("-", "_")] = {
            "median_s": {k: round(v, 3) for k, v in median.items()}, "wall_s": round(wall, 3),
            "cores_busy": round(sum(median.values()) / wall, 2),
            "this_process_ms_per_child": round(per_child[path], 2)}
    floor = _floor(measured, cores)
    if floor:
        lines.append(floor[0])
        document["cpu_floor"] = floor[1]
    lines.append("  this process per child: " + ", ".join(
        f"{ms:.1f} ms ({LABELS[path]})" for path, ms in per_child.items()))
    switches = _switches(runs, children)
    if switches:
        lines.append("  this process's context switches per child, voluntary / involuntary: "
                     + ", ".join(f"{voluntary:.0f} / {involuntary:.0f} ({LABELS[path]})"
                                 for path, (voluntary, involuntary) in switches.items()))
        for path, (voluntary, involuntary) in switches.items():
            document[path.replace("-", "_")]["context_switches_per_child"] = {
                "voluntary": round(voluntary, 1), "involuntary": round(involuntary, 1)}
    in_process = runs["in-process"]
    parts = _parts(in_process, children)
    if parts:
        rest = per_child["in-process"] - sum(parts.values())
        lines.append("  deliver() per child, by the calling thread's CPU in each port: " + ", ".join(
            f"{name} {ms:.2f} ms" for name, ms in parts.items()) + f"; the rest {rest:.2f} ms "
            "(the supervisor: payload check and hash, decisions, threads, telemetry)")
        document["in_process"]["ms_per_child_by_port"] = {
            **{name: round(ms, 3) for name, ms in parts.items()}, "rest": round(rest, 3)}
    lent = [(seconds, spent["journal_connection_lent"]) for seconds, spent in in_process
            if "journal_connection_lent" in spent]
    if lent:
        held = statistics.median(share for _, share in lent)
        wall = statistics.median(seconds for seconds, _ in lent)
        lines.append(f"  the SQLite journal's one connection, which every transaction holds: lent "
                     f"{held:.2f} s of the {wall:.2f} s ({held / wall:.0%}; its serial part)")
        document["in_process"]["journal_connection_lent_s"] = round(held, 3)
    return lines, document


def _floor(measured: dict[str, tuple[float, dict[str, float]]],
           cores: int) -> tuple[str, dict[str, Any]] | None:
    """The fastest each watched delivery could run on this machine: its CPU (every watched
    process) spread over all the cores, were they busy all the time; against the bare upload."""
    if "bare" not in measured:
        return None
    bare_s = measured["bare"][0]
    floors = {path: sum(measured[path][1].values()) / cores
              for path in ("in-process", "no-wire") if path in measured}
    text = " and ".join(f"{LABELS[path]} {seconds:.2f} s = {seconds / bare_s:.2f}x"
                        for path, seconds in floors.items())
    line = (f"  CPU floor (the CPU above over the {cores} cores, were they always busy; no "
            f"schedule of the same work runs faster here): {text} the bare upload "
            f"({bare_s:.2f} s)")
    return line, {"bare_s": round(bare_s, 4), **{
        path.replace("-", "_"): {"s": round(seconds, 4), "over_bare": round(seconds / bare_s, 3)}
        for path, seconds in floors.items()}}


PORTS = {"journal": "journal", "artifacts": "artifacts", "submit": "transport",
         "poll": "transport"}
"""The timed ports' categories (``thread_cpu.<category>...``) and the part each is shown as."""


def _parts(repeats: list[tuple[float, dict[str, float]]], children: int) -> dict[str, float]:
    """Median CPU ms per child spent by the calling threads in each port's calls."""
    if not repeats or not any(key.startswith("thread_cpu.") for key in repeats[0][1]):
        return {}

    def part(spent: dict[str, float], name: str) -> float:
        return sum(value for key, value in spent.items()
                   if key.startswith("thread_cpu.")
                   and PORTS.get(key.split(".")[1]) == name)
    return {name: statistics.median(part(spent, name) for _, spent in repeats) / children * 1000
            for name in dict.fromkeys(PORTS.values())}


def _switches(runs: dict[str, list[tuple[float, dict[str, float]]]],
              children: int) -> dict[str, tuple[float, float]]:
    """Median voluntary and involuntary context switches per child of each watched path."""
    found: dict[str, tuple[float, float]] = {}
    for path, repeats in runs.items():
        if path not in LABELS or not repeats or "switches.voluntary" not in repeats[0][1]:
            continue
        voluntary, involuntary = (
            statistics.median(spent[f"switches.{kind}"] for _, spent in repeats) / children
            for kind in ("voluntary", "involuntary"))
        found[path] = (voluntary, involuntary)
    return found
