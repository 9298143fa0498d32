"""The delivery benchmark's results: one table per scenario and journal, and the JSON document."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

import _deliver_cpu as cpu
import _deliver_stages as stages
from _deliver_paths import Run

MB = 1_000_000
LABELS = {"sync": "sync NDJSON (10,000-row batches)",
          "async": "async CSV+gzip jobs (poll interval 0, jobs complete at once)"}
NOTES = {"dpone": "dpone deliver --wait: cold process (imports, freeze, seal, journal, send, "
                  "verify)",
         "telemetry": "the same with --log-format json and --metrics-port (events to a file)",
         "naive": "requests + csv + json.dumps per row, no journal (subprocess)",
         "bare": "httpx, the same sealed bodies from memory, nothing else (in-process)",
         "checked": "the bare upload, each payload read from the store and its SHA-256 checked "
                    "first (in-process)"}


@dataclass
class Sealing:
    rows: int
    children: int
    wire_bytes: int
    freeze_s: float
    seal_s: float


@dataclass
class Result:
    scenario: str
    journal: str
    sealing: Sealing
    limits: stages.Limits | None = None
    runs: dict[str, list[Run]] = field(default_factory=dict)

    def stage_report(self) -> tuple[list[str], dict[str, Any]] | None:
        """The stage table of the in-process repeats against the same-run limits."""
        runs = self.runs.get("in-process", [])
        if self.limits is None or not runs:
            return None
        bare, dpone, checked = self.median("bare"), self.median("dpone"), self.median("checked")
        unwired = [stages.stage_times(run.spent, run.seconds)["drive"]
                   for run in self.runs.get("no-wire", [])]
        return stages.render([stages.stage_times(run.spent, run.seconds) for run in runs],
                             self.limits,
                             None if bare is None else bare.seconds,
                             None if dpone is None else dpone.seconds,
                             None if checked is None else checked.seconds,
                             [stages.stage_cores(run.spent) for run in runs],
                             statistics.median(unwired) if unwired else None)

    def cpu_report(self) -> tuple[list[str], dict[str, Any]]:
        """Where the CPU of the in-process runs went (this process, receiver, journal server)."""
        return cpu.render({path: [(run.seconds, run.spent) for run in self.runs.get(path, [])]
                           for path in cpu.LABELS}, self.sealing.children)

    def median(self, path: str) -> Run | None:
        runs = sorted(self.runs.get(path, []), key=lambda run: run.seconds)
        return runs[(len(runs) - 1) // 2] if runs else None

    def ratios(self, other: str) -> list[float]:
        """dpone's rows/s over ``other``'s, per repeat (same dataset, so other s / dpone s)."""
        pairs = zip(self.runs.get("dpone", []), self.runs.get(other, []), strict=False)
        return [(dpone.rows / dpone.seconds) / (peer.rows / peer.seconds) for dpone, peer in pairs]

    def cpu_ratios(self, path: str) -> list[float]:
        """``path``'s CPU seconds over dpone's, per repeat (cold CLI runs only)."""
        pairs = zip(self.runs.get("dpone", []), self.runs.get(path, []), strict=False)
        return [run.cpu_s / dpone.cpu_s for dpone, run in pairs
                if run.cpu_s and dpone.cpu_s]

    def ratio(self, other: str) -> float | None:
        dpone, peer = self.median("dpone"), self.median(other)
        if dpone is None or peer is None:
            return None
        return (dpone.rows / dpone.seconds) / (peer.rows / peer.seconds)

    def per_child_ms(self, prefix: str) -> float | None:
        """``prefix``'s median time per child over the in-process runs."""
        runs = self.runs.get("in-process", [])
        if not runs:
            return None
        return statistics.median(run.spent_in(prefix) for run in runs) / self.sealing.children \
            * 1000

    def to_json(self) -> dict[str, Any]:
        medians = {path: run.to_json() for path in self.runs if (run := self.median(path))}
        return {
            "scenario": self.scenario, "journal": self.journal,
            "sealed": {"rows": self.sealing.rows, "children": self.sealing.children,
                       "wire_bytes": self.sealing.wire_bytes,
                       "in_process_freeze_s": round(self.sealing.freeze_s, 3),
                       "in_process_seal_s": round(self.sealing.seal_s, 3)},
            "median": medians,
            "runs": {path: [run.to_json() for run in runs] for path, runs in self.runs.items()},
            "ratios": {f"dpone/{other}": {"median": _round(self.ratio(other)),
                                           "per_repeat": [round(r, 3)
                                                          for r in self.ratios(other)]}
                       for other in ("naive", "bare", "checked") if other in self.runs},
            "telemetry_time_on_over_off": None if "telemetry" not in self.runs else {
                "median": _round(self.ratio("telemetry")),
                "median_of_pairs": _round(statistics.median(self.ratios("telemetry"))),
                "cpu_median_of_pairs": _round(statistics.median(self.cpu_ratios("telemetry"))
                                              if self.cpu_ratios("telemetry") else None),
                "per_repeat": [round(r, 3) for r in self.ratios("telemetry")]},
            "stages": None if (report := self.stage_report()) is None else report[1],
            "in_process_cpu": self.cpu_report()[1] or None,
            "per_child_ms_in_process": {
                part: _round(self.per_child_ms(part))
                for part in ("journal", "artifacts", "submit", "poll")},
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _spread(values: list[float]) -> str:
    return f" (repeats {min(values):.2f}..{max(values):.2f})" if len(values) > 1 else ""


def render(result: Result, journal_note: str, repeat: int) -> list[str]:
    sealing = result.sealing
    lines = [f"== {LABELS[result.scenario]}, {journal_note}: {sealing.rows:,} rows, "
             f"{sealing.children} children, {sealing.wire_bytes / MB:.1f} MB sealed on the wire; "
             f"median of {repeat}",
             f"{'path':<7} {'s':>7} {'rows/s':>9} {'MB/s':>7} {'peak RSS MB':>11} "
             f"{'requests':>8} {'dpone/x':>8}  what"]
    for path in ("dpone", "telemetry", "naive", "bare", "checked"):
        run = result.median(path)
        if run is None:
            continue
        ratio = result.ratio(path) if path not in ("dpone", "telemetry") else None
        rss = "-" if run.peak_rss_mb is None else f"{run.peak_rss_mb:.0f}"
        lines.append(f"{path:<7} {run.seconds:>7.2f} {run.rows / run.seconds:>9,.0f} "
                     f"{run.wire_bytes / MB / run.seconds:>7.1f} {rss:>11} {run.requests:>8} "
                     f"{'' if ratio is None else f'{ratio:.2f}x':>8}  {NOTES[path]}")
    if (cost := result.ratio("telemetry")) is not None:
        per_repeat = result.ratios("telemetry")
        cpu = result.cpu_ratios("telemetry")
        lines.append(f"telemetry on/off: {cost:.3f}x the time (median runs), "
                     f"{statistics.median(per_repeat):.3f}x (median of the repeats' pairs: "
                     f"{', '.join(f'{r:.3f}' for r in per_repeat)})")
        if cpu:
            lines.append(f"telemetry on/off: {statistics.median(cpu):.3f}x the CPU seconds "
                         f"(median of the repeats' pairs: {', '.join(f'{r:.3f}' for r in cpu)})")
    for other in ("naive", "bare", "checked"):
        if (ratio := result.ratio(other)) is not None:
            lines.append(f"dpone/{other}: {ratio:.2f}x by rows/s{_spread(result.ratios(other))}")
    run = result.median("in-process")
    if (journal_ms := result.per_child_ms("journal")) is not None and run is not None:
        n = sealing.children
        lines.append(
            f"journal: {journal_ms:.1f} ms/child ({run.calls_in('journal') / n:.0f} calls/child)"
            f"; artifacts {result.per_child_ms('artifacts'):.1f} ms/child "
            f"({run.calls_in('artifacts') / n:.0f} calls); submit "
            f"{result.per_child_ms('submit'):.1f}, poll {result.per_child_ms('poll'):.1f} "
            f"ms/child -- from a separate in-process deliver() with timing proxies on its ports "
            f"(median {run.seconds:.2f} s, not the dpone row above)")
        lines.append("  per call, median in-process run: " + port_calls(run, n))
    if (report := result.stage_report()) is not None:
        lines += report[0]
    lines += result.cpu_report()[0]
    return lines


def port_calls(run: Run, children: int) -> str:
    cells = []
    for key in sorted(run.spent, key=lambda key: -run.spent[key]):
        if key.startswith(("journal.", "artifacts.")):
            calls = run.calls[key]
            cells.append(f"{key} {calls / children:.2g}/child x "
                         f"{run.spent[key] / calls * 1000:.2f} ms")
    return "; ".join(cells)
