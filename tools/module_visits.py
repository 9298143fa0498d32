"""How far one delivery's control wanders across the executor's modules.

Runs ``deliver()`` in process (an example workload sealed into a scratch store, a SQLite journal,
the mock receiver over loopback, the real transport) under a profiler hook, and follows which
module of the package ``--scope`` (default ``dpone.executor``) each called function belongs to:
a *visit* is a call into a module of the scope other than the one the previous call was in (a
run of calls within one module is one visit); a *return* is a visit to a module the trail had
already left. Threads that drive children count (the run's own and its child workers); lease
heartbeats do not. *Control moves* count the returns as well (every change of the module control
is in, after a call or a return).

    .venv/bin/python tools/module_visits.py --family sync      # one synchronous child
    .venv/bin/python tools/module_visits.py --family async     # two asynchronous children

It prints the visits, the returns, the distinct modules, the share of the busiest module, and
the visits per module (``--sequence`` also prints the whole path).
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import os
import random
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from dpone.executor.clock import SystemClock  # noqa: E402
from dpone.executor.supervisor import DeliveryCompleted, deliver  # noqa: E402
from dpone.journal.sqlite import SqliteJournal  # noqa: E402
from dpone.receiver import ReceiverConfig, ReceiverThread  # noqa: E402
from support.delivery import (  # noqa: E402
    ENVIRONMENT,
    TOKEN,
    TOKEN_ENV,
    http_transport,
    seal,
)

INTERVALS = {"sync": (dt.date(2026, 8, 1), dt.date(2026, 8, 7)),
             "async": (dt.date(2026, 8, 1), dt.date(2026, 8, 7))}
"""One synchronous child (a 7-day window), two asynchronous children (3-day windows)."""


class Visits:
    """The module trail of every traced thread: ``calls`` (the module of each function called,
    a repeat of the module just before folded into it) and ``moves`` (the module control is in
    after every call and every return, folded the same way)."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.calls: dict[int, list[str]] = collections.defaultdict(list)
        self.moves: dict[int, list[str]] = collections.defaultdict(list)

    def _inside(self, name: str) -> bool:
        return name == self.scope or name.startswith(self.scope + ".")

    def _module(self, frame: FrameType | None) -> str | None:
        while frame is not None:
            name = str(frame.f_globals.get("__name__", ""))
            if self._inside(name):
                return name
            frame = frame.f_back
        return None

    def hook(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event not in ("call", "return"):
            return
        thread = threading.current_thread()
        if not (thread is threading.main_thread() or thread.name.startswith("dpone-child")):
            return
        ident = thread.ident or 0
        name = str(frame.f_globals.get("__name__", ""))
        if event == "call" and self._inside(name):
            _append(self.calls[ident], name)
        module = self._module(frame if event == "call" else frame.f_back)
        if module is not None:
            _append(self.moves[ident], module)

    def report(self, *, sequence: bool) -> str:
        visits = [module for path in self.calls.values() for module in path]
        counts = collections.Counter(visits)
        busiest, most = counts.most_common(1)[0]
        moves = [module for path in self.moves.values() for module in path]
        lines = [f"visits {len(visits)}, returns to a module already left "
                 f"{_returns(self.calls)}, modules {len(counts)}, busiest {busiest} {most} "
                 f"({100 * most / len(visits):.1f}% of visits)",
                 f"control moves (calls and returns) {len(moves)}, to a module already left "
                 f"{_returns(self.moves)}"]
        lines += [f"  {count:4d}  {module}" for module, count in counts.most_common()]
        if sequence:
            lines += ["path:"] + [f"  {module}" for module in visits]
        return "\n".join(lines)


def _append(path: list[str], module: str) -> None:
    if not path or path[-1] != module:
        path.append(module)


def _returns(paths: dict[int, list[str]]) -> int:
    """Visits to a module the thread's trail had already left."""
    returns = 0
    for path in paths.values():
        left: set[str] = set()
        for previous, module in zip([None, *path], path, strict=False):
            if module in left:
                returns += 1
            if previous is not None:
                left.add(previous)
    return returns


def run(family: str, scope: str) -> Visits:
    os.environ.setdefault(TOKEN_ENV, TOKEN)
    with tempfile.TemporaryDirectory(prefix="dpone-visits-") as scratch, \
            ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0)) as receiver:
        sealed = seal(family, Path(scratch) / "artifacts", INTERVALS[family])
        journal = SqliteJournal(Path(scratch) / "journal.sqlite3", environment_id=ENVIRONMENT)
        journal.migrate()
        transport = http_transport(sealed.plan, receiver.base_url)
        clock = SystemClock()  # as the CLI passes it: its sleeps are the run's own waits
        visits = Visits(scope)
        threading.setprofile(visits.hook)
        sys.setprofile(visits.hook)
        try:
            result = deliver(sealed.plan, sealed.topology, journal, sealed.store, transport,
                             holder="module-visits", clock=clock, rng=random.Random(1))
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
            transport.close()
            journal.close()
        assert isinstance(result, DeliveryCompleted), result
        return visits


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=("sync", "async"), default="sync")
    parser.add_argument("--scope", default="dpone.executor")
    parser.add_argument("--sequence", action="store_true")
    args = parser.parse_args(argv)
    print(run(args.family, args.scope).report(sequence=args.sequence))
    return 0


if __name__ == "__main__":
    sys.exit(main())
